import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../src/embeddedPostgres.ts';
import { walLevel } from '../src/logicalDecoding.ts';
import { freePort } from '../src/ports.ts';
import { isProcessAlive } from '../src/processes.ts';

const hookTimeout = 120_000;

/**
 * The demo's embedded PostgreSQL (a machine without one) is ready for the CDC relay from its first
 * start: wal_level=logical is in its command line, so no ALTER SYSTEM and no restart are needed.
 */
describe('the embedded PostgreSQL', () => {
  let postgres: EmbeddedPostgres | undefined;

  beforeAll(async () => {
    // Its default folder under .local/ (postgres-<port>): a folder the server's own user can reach
    // when the tests run as root (a private one under /tmp it could not).
    postgres = await startEmbeddedPostgres({ port: await freePort() });
  }, hookTimeout);

  afterAll(async () => {
    const pid = postgres?.pid;
    await postgres?.stop();
    if (pid !== undefined) expect(isProcessAlive(pid)).toBe(false);
    if (postgres) rmSync(postgres.dataDir, { recursive: true, force: true });
    if (postgres) rmSync(postgres.logFile, { force: true });
  }, hookTimeout);

  it('runs with wal_level=logical', async () => {
    expect(await walLevel(`${postgres?.url}/postgres`)).toBe('logical');
  });
});
