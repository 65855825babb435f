import { z } from 'zod';
import { eventSchemas } from './registry.ts';

/** The JSON Schema of one registered event type and schema version, as published in asyncapi.yaml. */
export type EventJsonSchema = {
  /** `ORDER_CREATED` */
  type: string;
  /** `1` */
  version: number;
  /** Key under `components.schemas` in asyncapi.yaml: `OrderCreatedV1`. */
  name: string;
  schema: Record<string, unknown>;
};

/** `ORDER_CREATED`, 1 → `OrderCreatedV1`. */
export function jsonSchemaName(type: string, version: number): string {
  const words = type.toLowerCase().split('_').filter(Boolean);
  return `${words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('')}V${version}`;
}

/**
 * The zod contract of an event's data as JSON Schema, in the dialect AsyncAPI 3.0 understands.
 *
 * - `target: 'draft-07'`: the default schema format of AsyncAPI 3.0 (the AsyncAPI Schema Object)
 *   is a superset of JSON Schema draft-07, not of 2020-12 (zod's default target). For the
 *   keywords our contracts use the two outputs are identical apart from `$schema`.
 * - `$schema` is dropped: the document declares the dialect once (AsyncAPI's default
 *   `schemaFormat`), and a `$schema` inside a component schema would only repeat it.
 * - `io: 'input'` (zod's default) describes what a producer must send.
 * - `unrepresentable: 'throw'` (zod's default) makes a contract that JSON Schema cannot express
 *   (a transform, a refinement) fail here instead of publishing a schema that is looser than the code.
 */
export function toEventJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...jsonSchema } = z.toJSONSchema(schema, { target: 'draft-07' });
  return jsonSchema;
}

/** Every registered type and version, ordered by type, then version. */
export function eventJsonSchemas(): EventJsonSchema[] {
  return Object.entries(eventSchemas)
    .sort(([a], [b]) => a.localeCompare(b))
    .flatMap(([type, versions]) =>
      Object.entries(versions)
        .map(([version, schema]) => ({ version: Number(version), schema }))
        .sort((a, b) => a.version - b.version)
        .map(({ version, schema }) => ({
          type,
          version,
          name: jsonSchemaName(type, version),
          schema: toEventJsonSchema(schema),
        })),
    );
}
