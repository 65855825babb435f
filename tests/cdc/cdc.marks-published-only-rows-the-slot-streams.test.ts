import { randomBytes } from 'node:crypto';
import { dropReplicationSlot, logicalDecodingUnavailable } from '@outbox/devstack/logical-decoding';
import { freePort } from '@outbox/devstack/ports';
import { type ServiceProcess, startService } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { slotReadAndConsistent, startLogicalSlotReader } from '@outbox/devstack/testing/logical-slot-reader';
import { createOutboxDatabase, insertEvents } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce, type TestDatabase, testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { readTopic } from '@outbox/devstack/testing/topic-reader';
import { redrive } from '@outbox/outbox';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * In debezium mode the relay marks a pending row `published` once the slot has confirmed a position
 * after it (apps/relay/src/cdc/cdcConfirmation.ts): right only for rows whose INSERT the slot
 * streams. Two that it does not stream must reach their topic all the same: a dead letter redriven
 * in debezium mode (an UPDATE, which the connector does not route) and a row committed while the
 * slot is still being created (before its consistent point, so never decoded). The slot is held by
 * pg_recvlogical, a real reader that streams nothing to Kafka: whatever reaches the topic, the
 * relay published.
 */

const unavailable = await logicalDecodingUnavailable(testPostgresUrl);
if (unavailable) console.warn(`tests/cdc skipped: ${unavailable}`);

useLeakGuard();

const brokers = sharedKafkaBrokers();
const run = randomBytes(3).toString('hex');
const cleanups: (() => Promise<unknown>)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((err: unknown) => console.warn(err));
}, 120_000);

type Case = { db: TestDatabase; prefix: string; topic: string; slot: string };

async function newCase(label: string): Promise<Case> {
  const db = await createOutboxDatabase(`cdc_streams_${label}`);
  const c = {
    db,
    prefix: `cdc-streams-${run}-${label}.`,
    topic: `cdc-streams-${run}-${label}.order.events`,
    slot: `cdc_streams_${run}_${label}`,
  };
  cleanups.push(async () => {
    await dropReplicationSlot(db.url, c.slot);
    await db.drop();
    await deleteTopic(c.topic);
  });
  return c;
}

async function startSlotReader(c: Case, waitForSlot = true) {
  const reader = await startLogicalSlotReader(c.db.url, c.slot, { waitForSlot });
  cleanups.push(() => reader.stop());
  return reader;
}

async function startCdcRelay(c: Case): Promise<ServiceProcess> {
  const relay = await startService(
    'relay',
    {
      DATABASE_URL: c.db.url,
      KAFKA_BROKERS: brokers.join(','),
      KAFKA_TOPIC_PREFIX: c.prefix,
      KAFKA_TOPIC_PARTITIONS: '1',
      RELAY_MODE: 'debezium',
      // No Connect worker: /healthz says so; the confirmation reads only the slot.
      RELAY_CONNECT_URL: `http://127.0.0.1:${await freePort()}`,
      RELAY_CONNECTOR: `cdc-streams-${run}`,
      RELAY_REPLICATION_SLOT: c.slot,
      RELAY_CDC_CONFIRM_INTERVAL_MS: '200',
    },
    { port: await freePort(), label: 'cdc-streams' },
  );
  cleanups.push(() => relay.stop());
  return relay;
}

async function idsWhere(c: Case, where: string): Promise<string[]> {
  const rows = await queryOnce<{ id: string }>(c.db.url, `select id from outbox where ${where} order by seq`);
  return rows.map((row) => row.id);
}

async function published(c: Case, id: string): Promise<true | undefined> {
  const rows = await idsWhere(c, `status = 'published' and id = '${id}'`);
  return rows.length === 1 ? true : undefined;
}

/** The event ids on the case's topic once `wanted` are all there, or after `timeoutMs`. */
async function onTopic(c: Case, wanted: string[], timeoutMs = 30_000): Promise<Set<string>> {
  const seen = new Set<string>();
  await readTopic(brokers, c.topic, {
    until: (messages) => {
      for (const { eventId } of messages) if (eventId) seen.add(eventId);
      return wanted.every((id) => seen.has(id));
    },
    timeoutMs,
  }).catch(() => undefined); // a timeout: the assertion says which ids are missing
  return seen;
}

describe.skipIf(unavailable !== undefined)(
  'debezium mode marks published only rows the slot streams',
  {
    timeout: 180_000,
  },
  () => {
    it('publishes a dead letter redriven in debezium mode', async () => {
      const c = await newCase('redrive');
      // Left by the polling relay before the switch: one dead letter, one pending row.
      await insertEvents(c.db.url, { count: 2, aggregates: 2, aggregateIdPrefix: `redrive-${run}-` });
      const [dead, pending] = await idsWhere(c, 'true');
      if (!dead || !pending) throw new Error('two rows expected');
      await queryOnce(
        c.db.url,
        `update outbox set status = 'failed', attempts = 10, last_error = 'too large' where id = $1`,
        [dead],
      );
      await startSlotReader(c);
      await startCdcRelay(c);
      await eventually('the pending row drained', () => published(c, pending), 60_000);

      const pool = new pg.Pool({ connectionString: c.db.url, max: 1 });
      try {
        expect(await redrive(pool, { id: dead })).toEqual([dead]);
      } finally {
        await pool.end();
      }
      await eventually('the redriven row published', () => published(c, dead), 60_000);
      const seen = await onTopic(c, [pending, dead]);
      expect([pending, dead].filter((id) => !seen.has(id))).toEqual([]);
    });

    it('publishes a row committed while the slot is being created', async () => {
      const c = await newCase('creating');
      await insertEvents(c.db.url, { count: 1, aggregates: 1, aggregateIdPrefix: `early-${run}-` });
      const [early] = await idsWhere(c, 'true');
      if (!early) throw new Error('one row expected');
      await startCdcRelay(c);

      // A transaction open when the slot is created holds its creation short of its consistent point.
      const open = new pg.Client({ connectionString: c.db.url });
      await open.connect();
      cleanups.push(() => open.end());
      await open.query('begin');
      await open.query('select pg_current_xact_id()');
      await startSlotReader(c, false);
      await eventually('the slot shows its reader while still being created', async () => {
        const rows = await queryOnce<{ creating: boolean }>(
          c.db.url,
          'select active and confirmed_flush_lsn is null as creating from pg_replication_slots where slot_name = $1',
          [c.slot],
        );
        return rows[0]?.creating ? true : undefined;
      });
      // Give the relay's checks (every 200 ms) time to see that window; a relay that takes the
      // reader for a ready slot drains `early` in it.
      await eventually('the relay checked the slot being created', () => published(c, early), 5_000).catch(
        () => undefined,
      );
      await insertEvents(c.db.url, { count: 1, aggregates: 1, aggregateIdPrefix: `window-${run}-` });
      const [window] = await idsWhere(c, `aggregate_id like 'window-%'`);
      if (!window) throw new Error('the window row expected');
      await open.query('commit');
      await eventually('the slot created', async () =>
        (await slotReadAndConsistent(c.db.url, c.slot)) ? true : undefined,
      );

      await eventually(
        'both rows published',
        async () => ((await published(c, early)) && (await published(c, window)) ? true : undefined),
        60_000,
      );
      const seen = await onTopic(c, [early, window]);
      expect([early, window].filter((id) => !seen.has(id))).toEqual([]);
    });
  },
);

async function deleteTopic(name: string): Promise<void> {
  const admin = new Kafka({ clientId: 'cdc-streams-cleanup', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    if ((await admin.listTopics()).includes(name)) await admin.deleteTopics({ topics: [name] });
  } finally {
    await admin.disconnect();
  }
}
