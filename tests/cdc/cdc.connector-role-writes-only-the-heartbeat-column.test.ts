import { ensureConnectorRole } from '@outbox/devstack/logical-decoding';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents } from '@outbox/devstack/testing/outbox-database';
import { queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { renderCdcConnectorConfig } from '@outbox/outbox';
import { afterAll, beforeAll, expect, it } from 'vitest';

/**
 * The role Debezium reads an outbox as (docs/production.md, "The connector's credentials") may run
 * the connector's heartbeat query and read the rows, and change nothing else of the outbox: a
 * leaked password must not let anyone mark events published or rewrite them.
 */

useLeakGuard();

// The SQLSTATE PostgreSQL answers a statement the role has no right to run with.
const INSUFFICIENT_PRIVILEGE = '42501';

let db: TestDatabase;
let asRole: string;

beforeAll(async () => {
  db = await createOutboxDatabase('cdc_connector_role');
  asRole = await ensureConnectorRole(db.url);
  await insertEvents(db.url, { count: 2, aggregates: 1 });
});

afterAll(async () => {
  await db?.drop();
});

it('runs the heartbeat query and reads the outbox', async () => {
  const heartbeat = renderCdcConnectorConfig({
    databaseUrl: db.url,
    topicPrefix: 'unused.',
    topicPartitions: 1,
    slotName: 'unused',
    publicationName: 'unused',
    serverName: 'unused',
  })['heartbeat.action.query'];
  if (!heartbeat) throw new Error('the connector config has no heartbeat query');
  await queryOnce(asRole, heartbeat);
  expect(await queryOnce(asRole, 'select id, status, payload from outbox')).toHaveLength(2);
});

it.each([
  ["update outbox set status = 'published'"],
  ["update outbox set payload = '{}'::jsonb"],
  ['delete from outbox'],
  [
    "insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload) values (gen_random_uuid(), '/x', 'order', 'a', 'X', 1, '{}')",
  ],
])('is refused: %s', async (statement) => {
  await expect(queryOnce(asRole, statement)).rejects.toMatchObject({ code: INSUFFICIENT_PRIVILEGE });
});
