// node-pg-migrate runs migrations in name order and refuses to start when a migration that has not
// run sorts before one that has. Two files with the same number (two branches each adding a "004")
// therefore break every database that ran the other one first: caught here, before any database.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../../..');
// Each entry is one numbering: the outbox's and the inbox's folders share one history table.
const folders = [
  'packages/outbox/migrations + packages/inbox/migrations',
  'apps/orders/migrations',
  'apps/inventory/migrations',
  'apps/billing/migrations',
];

describe('SQL migrations', () => {
  it.each(folders)('%s numbers each migration once, from 001 without gaps', (folder) => {
    const numbers = folder
      .split(' + ')
      .flatMap((dir) => readdirSync(join(root, dir)))
      .filter((name) => /\.(sql|ts)$/.test(name))
      .map((name) => Number(name.match(/^(\d+)_/)?.[1]))
      .sort((a, b) => a - b);
    expect(numbers.length).toBeGreaterThan(0);
    expect(numbers).toEqual(numbers.map((_, index) => index + 1));
  });
});
