// Each Kafka client lives in one folder of the seam (packages/runtime/src/kafka/<client>/), behind
// the project's ports (ports.ts): the only production code that imports the client's package, and
// reached from elsewhere only through the one file that chooses the client (kafka/client.ts). A
// client imported anywhere else is a producer or consumer outside the ports' guarantees, and a
// client that deleting its folder no longer removes. Tests, benches and tools may use kafkajs
// directly, as an independent observer (through '@outbox/runtime/kafka/kafkajs' or the package).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRODUCTION_GLOBS, readSourceFiles, repoRoot } from './productionCode.ts';

const SEAM = 'packages/runtime/src/kafka/';
/** Each client package and the one folder that may import it. */
const CLIENT_FOLDERS: Record<string, string> = {
  kafkajs: `${SEAM}kafkajs/`,
  '@platformatic/kafka': `${SEAM}platformatic/`,
};
/** Clients that belong to no folder: imported nowhere in production code. */
const OTHER_CLIENTS = ['@confluentinc/kafka-javascript', 'node-rdkafka'];
/** The one file outside a client's folder that reaches into it: where the client is chosen. */
const CHOICE = `${SEAM}client.ts`;

/** `from 'x'`, `import 'x'`, `import('x')`, `require('x')`, and their subpaths (`x/...`). */
const importOf = (client: string) =>
  new RegExp(
    `(?:from\\s*|import\\s*\\(?\\s*|require\\s*\\(\\s*)['"]${client.replace('/', '\\/')}(?:/[^'"]*)?['"]`,
  );

const files = readSourceFiles(PRODUCTION_GLOBS);

function clientImports(path: string): string[] {
  const text = readFileSync(join(repoRoot, path), 'utf8');
  return [...Object.keys(CLIENT_FOLDERS), ...OTHER_CLIENTS].filter((client) => importOf(client).test(text));
}

const folderOf = (path: string) => Object.values(CLIENT_FOLDERS).find((folder) => path.startsWith(folder));

describe('the Kafka client seam', () => {
  it('lets only a client’s own folder import the client’s package', () => {
    const found = files.flatMap((file) => clientImports(file.path).map((client) => ({ file, client })));
    // The check sees imports at all: each folder imports its client.
    for (const [client, folder] of Object.entries(CLIENT_FOLDERS))
      expect(found.filter((f) => f.client === client && f.file.path.startsWith(folder))).not.toEqual([]);
    const outside = found
      .filter(({ file, client }) => !file.path.startsWith(CLIENT_FOLDERS[client] ?? '\0'))
      .map(({ file, client }) => `${file.path} imports ${client}`);
    expect(outside).toEqual([]);
  });

  it('lets only the client choice reach into a client’s folder', () => {
    const reaching = files.flatMap((file) =>
      file.imports
        .filter((target) => folderOf(target) && folderOf(target) !== folderOf(file.path))
        .filter(() => file.path !== CHOICE)
        .map((target) => `${file.path} imports ${target}`),
    );
    expect(reaching).toEqual([]);
    // The choice does reach into each folder: the check sees resolved imports at all.
    const choice = files.find((file) => file.path === CHOICE);
    for (const folder of Object.values(CLIENT_FOLDERS))
      expect(
        choice?.imports.some((target) => target.startsWith(folder)),
        folder,
      ).toBe(true);
  });

  it('recognises every form of import', () => {
    for (const line of [
      "import { Kafka } from 'kafkajs';",
      'import type { Admin } from "kafkajs";',
      "const k = await import('kafkajs');",
      "require('kafkajs/src/network/requestQueue')",
    ])
      expect(importOf('kafkajs').test(line), line).toBe(true);
    expect(importOf('@platformatic/kafka').test("import { Producer } from '@platformatic/kafka';")).toBe(
      true,
    );
    expect(importOf('kafkajs').test("import { createKafkaClient } from '@outbox/runtime/kafka';")).toBe(
      false,
    );
  });
});
