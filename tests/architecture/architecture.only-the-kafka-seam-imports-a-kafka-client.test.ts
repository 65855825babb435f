// packages/runtime/src/kafka is the one place production code reaches a Kafka client: its producer
// (in the log before it resolves), the consumer loop's primitives, the admin calls. A client
// imported anywhere else is a producer or consumer outside those guarantees, and a client switch
// that misses it. Tests, benches and tools may use kafkajs directly, as an independent observer.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = join(import.meta.dirname, '../..');
const SEAM = 'packages/runtime/src/kafka/';
const CLIENTS = ['kafkajs', '@platformatic/kafka', '@confluentinc/kafka-javascript', 'node-rdkafka'];
/** `from 'x'`, `import 'x'`, `import('x')`, `require('x')`, and their subpaths (`x/...`). */
const importOf = (client: string) =>
  new RegExp(
    `(?:from\\s*|import\\s*\\(?\\s*|require\\s*\\(\\s*)['"]${client.replace('/', '\\/')}(?:/[^'"]*)?['"]`,
  );

/** Every production source file: apps/<app>/src and packages/<package>/src, tests left out. */
function productionFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|tsx|js|mjs|cjs)$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name))
        files.push(path);
    }
  };
  for (const parent of ['apps', 'packages']) {
    for (const name of readdirSync(join(repoRoot, parent))) {
      const src = join(repoRoot, parent, name, 'src');
      try {
        walk(src);
      } catch {
        // a workspace without src/
      }
    }
  }
  return files.map((file) => relative(repoRoot, file));
}

function clientImports(file: string): string[] {
  const text = readFileSync(join(repoRoot, file), 'utf8');
  return CLIENTS.filter((client) => importOf(client).test(text));
}

describe('the Kafka client seam', () => {
  it('is the only production code that imports a Kafka client package', () => {
    const files = productionFiles();
    const seamFiles = files.filter((file) => file.startsWith(SEAM));
    // The check sees imports at all: the seam itself imports the client.
    expect(seamFiles.flatMap(clientImports)).toContain('kafkajs');
    const outside = files
      .filter((file) => !file.startsWith(SEAM))
      .flatMap((file) => clientImports(file).map((client) => `${file} imports ${client}`));
    expect(outside).toEqual([]);
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
    expect(importOf('kafkajs').test("import { createKafka } from '@outbox/runtime/kafka';")).toBe(false);
  });
});
