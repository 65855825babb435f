/**
 * The consumer side: a real inventory process (its production consumer: group member, inbox,
 * reserveStocks, its reply in the outbox) started with KAFKA_CLIENT=<client> on a fresh consumer
 * group, which reads a topic holding a backlog of ORDER_CREATED events from its beginning. A fresh
 * process per measurement: it catches up as a consumer does after an outage or a deploy.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { topicFor } from '@outbox/contracts';
import { freePort } from '@outbox/devstack/ports';
import { startService } from '@outbox/devstack/service-process';
import { createTestDatabase, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { migrate as migrateInventory } from '@outbox/inventory';
import type { KafkaClientName } from '@outbox/runtime/kafka';
import type { Kafka } from 'kafkajs';
import pg from 'pg';
import { checkServiceEffects, resetSql } from '../consumer/fixture.ts';
import { produce } from '../consumer/workload.ts';
import { type CpuReport, type CpuSnapshot, cpuSince, cpuSnapshot } from '../support/cpu.ts';
import { createTopic, freshName } from '../support/kafka.ts';
import { timed } from '../support/stats.ts';
import { log, params } from './params.ts';

export type ApplyFixture = { db: TestDatabase; admin: pg.Client; prefix: string; brokers: string[] };

export type ApplyMeasurement = {
  round: number;
  client: KafkaClientName;
  events: number;
  elapsedMs: number;
  eventsPerSec: number;
  /** From the first event applied to the last: `consumer` is the inventory process. */
  cpu: CpuReport;
};

/** One topic with the backlog (read by every measurement, each with its own group) and one inventory database. */
export async function startApplyFixture(kafka: Kafka, brokers: string[]): Promise<ApplyFixture> {
  const prefix = `${freshName('kafka-clients')}.`;
  const topic = topicFor('order', prefix);
  await createTopic(kafka, topic, params.topicPartitions);
  log(`producing ${params.consumerEvents} ORDER_CREATED events to ${topic}`);
  await produce(kafka, topic, params.consumerEvents, params.aggregates);
  const db = await createTestDatabase('bench_kafka_clients_inventory');
  const admin = new pg.Client({ connectionString: db.url });
  try {
    await migrateInventory(db.url);
    await admin.connect();
  } catch (err) {
    await admin.end().catch(() => {});
    await db.drop();
    throw err;
  }
  return { db, admin, prefix, brokers };
}

export async function stopApplyFixture(fixture: ApplyFixture): Promise<void> {
  await fixture.admin.end().catch(() => {});
  await fixture.db.drop();
}

/**
 * Timed from the first event's transaction (the earliest processed_at) until a poll every 25 ms
 * sees the N-th recorded (the database clock for both), so the process's start, its migrations
 * check and the group join are left out; its CPU over the same stretch, read from /proc.
 */
export async function apply(
  fixture: ApplyFixture,
  client: KafkaClientName,
  roundIndex: number,
  brokerPid: number,
): Promise<ApplyMeasurement> {
  const { admin } = fixture;
  const events = params.consumerEvents;
  await admin.query(resetSql.I as string);
  const service = await startService(
    'inventory',
    {
      DATABASE_URL: fixture.db.url,
      KAFKA_BROKERS: fixture.brokers.join(','),
      KAFKA_TOPIC_PREFIX: fixture.prefix,
      KAFKA_GROUP_ID: freshName(`inventory-${client}`),
      KAFKA_CLIENT: client,
      MIGRATE_ON_START: 'false',
      LOG_LEVEL: 'warn',
    },
    { port: await freePort(), label: 'bench-kafka-clients', name: `inventory-${client}`, timeoutMs: 60_000 },
  );
  try {
    const groups = { consumer: [service.pid ?? 0], broker: [brokerPid] };
    const { elapsedMs, cpu } = await waitUntilApplied(admin, events, groups, client);
    await checkServiceEffects(admin, 'I', events, `inventory on ${client}`, true);
    return {
      round: roundIndex,
      client,
      ...timed(events, elapsedMs),
      cpu,
    };
  } finally {
    await service.stop();
  }
}

/** Polls processed_events until `events` are recorded; the CPU from the first one seen. */
async function waitUntilApplied(
  admin: pg.Client,
  events: number,
  groups: Record<string, number[]>,
  client: KafkaClientName,
): Promise<{ elapsedMs: number; cpu: CpuReport }> {
  let first: CpuSnapshot | undefined;
  const deadline = Date.now() + 300_000;
  for (;;) {
    const { rows } = await admin.query<{ n: number; at: Date; start: Date | null }>(
      'select count(*)::int as n, clock_timestamp() as at, min(processed_at) as start from processed_events',
    );
    const { n, at, start } = rows[0] as { n: number; at: Date; start: Date | null };
    first ??= n > 0 ? cpuSnapshot(groups) : undefined;
    if (first && start && n >= events)
      return { elapsedMs: at.getTime() - start.getTime(), cpu: cpuSince(first, groups) };
    if (Date.now() > deadline)
      throw new Error(`inventory on ${client}: ${n} of ${events} applied after 300 s`);
    await sleep(25);
  }
}
