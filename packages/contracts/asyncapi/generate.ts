/**
 * Writes the event payload schemas of asyncapi.yaml from the zod contracts:
 *
 *   node packages/contracts/asyncapi/generate.ts
 *
 * Only `components.schemas.<Type>V<version>` entries are touched (one per registered type and
 * version, e.g. `OrderCreatedV1`); the rest of the document, comments included, is hand-written and
 * kept as it is. A `<Name>V<n>` schema whose type/version is no longer registered is removed.
 * tests/contracts/asyncapi.document-matches-the-contracts.test.ts fails when the checked-in file differs from what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isMap, parseDocument } from 'yaml';
import { eventJsonSchemas } from '../src/jsonSchema.ts';

export const asyncApiPath = fileURLToPath(new URL('./asyncapi.yaml', import.meta.url));

/** Names of generated schemas: `OrderCreatedV1`. Hand-written schemas must not look like this. */
const GENERATED_NAME = /^[A-Z][A-Za-z0-9]*V[1-9][0-9]*$/;

/** The document `source` with its generated payload schemas brought up to date. */
export function renderAsyncApi(source: string): string {
  const doc = parseDocument(source);
  if (doc.errors.length > 0) throw new Error(`asyncapi.yaml is not valid YAML: ${doc.errors[0]?.message}`);
  const generated = eventJsonSchemas();
  const schemas = doc.getIn(['components', 'schemas']);
  if (isMap(schemas)) {
    const wanted = new Set(generated.map(({ name }) => name));
    for (const item of [...schemas.items]) {
      const name = String(item.key);
      if (GENERATED_NAME.test(name) && !wanted.has(name)) schemas.delete(name);
    }
  }
  for (const { name, schema } of generated) {
    doc.setIn(['components', 'schemas', name], doc.createNode(schema));
  }
  // lineWidth 0: never fold long strings (the uuid pattern), so diffs stay one line per change.
  // singleQuote false: quote like biome's YAML formatter does, so `biome check --write` and this
  // script never undo each other (hand-written scalars keep the quotes they have).
  return doc.toString({ lineWidth: 0, singleQuote: false });
}

if (import.meta.main) {
  const before = readFileSync(asyncApiPath, 'utf8');
  const after = renderAsyncApi(before);
  if (after === before) {
    console.log(`${asyncApiPath} is up to date`);
  } else {
    writeFileSync(asyncApiPath, after);
    console.log(`wrote ${asyncApiPath}`);
  }
}
