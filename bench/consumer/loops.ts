/**
 * Each variant's consumer loop, started against a fixture; each returns how to stop it. They all
 * report to one tally: when the first message reached the variant's code, how many are done,
 * and the transactions and kafkajs batches it took.
 */
import { EVENT_SOURCE as BILLING_SOURCE, billingHandlers, PaymentProvider } from '@outbox/billing';
import { ORDER_CREATED, type OrderCreatedV1 } from '@outbox/contracts';
import {
  type EventConsumerOptions,
  type RunningConsumer,
  recordProcessed,
  runConsumer,
  startEventConsumer,
} from '@outbox/inbox';
import { EVENT_SOURCE as INVENTORY_SOURCE, inventoryHandlers } from '@outbox/inventory';
import { transactionOn } from '@outbox/runtime/database';
import { kafkajsClient } from '@outbox/runtime/kafka/kafkajs';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import type pg from 'pg';
import type { Fixture, progress, ServiceDatabase } from './fixture.ts';
import { params, quietLogger, type Variant } from './params.ts';
import { effectSql, effectsSql, readEvent } from './workload.ts';

export type Tally = {
  track: ReturnType<typeof progress>;
  transactions: number;
  batches: number;
  batchMessages: number;
};

export type LoopContext = {
  fixture: Fixture;
  variant: Variant;
  /** Messages to handle before the measurement ends. */
  events: number;
  groupId: string;
  tally: Tally;
  /** I and B: the service database their handlers write to. */
  service?: ServiceDatabase;
};

type Stop = () => Promise<void>;

export function startLoop(ctx: LoopContext): Promise<Stop> {
  const key = ctx.variant.key;
  if (key === 'A') return bareConsumer(ctx);
  if (key === 'V') return decodeOnly(ctx);
  if (key === 'P' || key === 'P1') return productionLoop(ctx);
  if (key === 'I' || key === 'B') return serviceLoop(ctx);
  return handWrittenLoop(ctx);
}

/** A chunk transaction that counts, once it committed, the events applied in it. */
const counting =
  ({ tally }: LoopContext, transaction: ReturnType<typeof transactionOn>, onStart: () => void = () => {}) =>
  async <T>(work: (tx: pg.PoolClient) => Promise<T>): Promise<T> => {
    onStart();
    const results = await transaction(work);
    tally.transactions++;
    tally.batches++;
    if (Array.isArray(results)) {
      tally.batchMessages += results.length;
      // The chunk step's transaction returns one `{ result }` per event, not bare results.
      tally.track.handled(results.filter((done: { result?: string }) => done?.result === 'applied').length);
    }
    return results;
  };

const kafkaOptions = (fixture: Fixture) => ({
  brokers: fixture.brokers,
  topicPrefix: fixture.prefix,
  topicLayout: { partitions: params.partitions },
});

/** A: kafkajs' eachMessage, no work: the ceiling. */
async function bareConsumer({ fixture, groupId, tally }: LoopContext): Promise<Stop> {
  const consumer = fixture.kafka.consumer({ groupId, allowAutoTopicCreation: false });
  await consumer.connect();
  await consumer.subscribe({ topics: [fixture.topic], fromBeginning: true });
  await consumer.run({
    eachMessage: async () => {
      tally.track.started();
      tally.track.handled();
    },
  });
  return () => consumer.disconnect();
}

/** V: runConsumer (eachBatch, decode + zod) with a chunk handler that does nothing. */
async function decodeOnly({ fixture, groupId, tally }: LoopContext): Promise<Stop> {
  const running: RunningConsumer = await runConsumer({
    client: kafkajsClient(fixture.kafka),
    groupId,
    topics: [fixture.topic],
    topicLayout: { partitions: params.partitions },
    logger: quietLogger,
    handleChunk: async (items) => {
      tally.track.started();
      tally.batches++;
      tally.batchMessages += items.length;
      tally.track.handled(items.length);
      return items.map(() => 'ignored' as const);
    },
  });
  return () => running.stop();
}

/** P and P1: the production loop with one effect row per event. */
async function productionLoop(ctx: LoopContext): Promise<Stop> {
  const { fixture, groupId, tally, variant } = ctx;
  const consumer = startEventConsumer<pg.PoolClient>({
    source: '/bench',
    groupId,
    kafka: kafkaOptions(fixture),
    aggregateTypes: ['order'],
    // Counts what committed: applyChunk's results, once the transaction is through.
    transaction: counting(ctx, transactionOn(fixture.pool)),
    handlers: {
      [ORDER_CREATED]: async (tx, event) => {
        tally.track.started();
        const { data } = event;
        await tx.query(effectSql, [event.id, data.orderId, data.totalCents]);
        return undefined;
      },
    },
    logger: quietLogger,
    registry: createMetricsRegistry('bench'),
    maxChunk: variant.txSize ?? 200,
  });
  return () => consumer.stop();
}

/** Billing's real handlers, with a provider that never fails, waits or declines. */
function billingBenchHandlers(service: ServiceDatabase, tally: Tally) {
  const provider = new PaymentProvider({
    limitCents: 10n ** 12n,
    faultRate: 0,
    latencyMs: 0,
    timeoutMs: 3_000,
    remember: 100_000,
  });
  const real = billingHandlers(service.pool, provider);
  const created = real[ORDER_CREATED];
  return {
    ...real,
    // The clock starts with the first chunk's step before its transaction (the provider calls).
    [ORDER_CREATED]: {
      prepareAll: (events: Parameters<NonNullable<typeof created.prepareAll>>[0]) => {
        tally.track.started();
        return created.prepareAll?.(events) ?? Promise.resolve();
      },
      applyAll: created.applyAll,
    },
  };
}

/** I and B: the production loop with inventory's or billing's own handlers, on its database. */
async function serviceLoop(ctx: LoopContext): Promise<Stop> {
  const { fixture, groupId, tally, variant } = ctx;
  const service = ctx.service as ServiceDatabase;
  // Counted as in P: the applied events of a chunk whose transaction committed.
  const counted = counting(ctx, transactionOn(service.pool), () => tally.track.started());
  const handlers: EventConsumerOptions<pg.PoolClient>['handlers'] =
    variant.key === 'I' ? inventoryHandlers : billingBenchHandlers(service, tally);
  const consumer = startEventConsumer<pg.PoolClient>({
    source: variant.key === 'I' ? INVENTORY_SOURCE : BILLING_SOURCE,
    groupId,
    kafka: kafkaOptions(fixture),
    aggregateTypes: ['order'],
    transaction: counted,
    handlers,
    logger: quietLogger,
    registry: createMetricsRegistry('bench'),
  });
  return () => consumer.stop();
}

/**
 * C10, C100, C and D: hand-written eachBatch loops kept as reference points, one transaction per
 * `txSize` messages (0: the whole fetched batch) with production's dedup write (recordProcessed);
 * D writes the effects as one set-based INSERT.
 */
async function handWrittenLoop({ fixture, variant, events, groupId, tally }: LoopContext): Promise<Stop> {
  const setBased = variant.key === 'D';
  const { pool } = fixture;
  const consumer = fixture.kafka.consumer({ groupId, allowAutoTopicCreation: false });
  await consumer.connect();
  await consumer.subscribe({ topics: [fixture.topic], fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
      tally.track.started();
      tally.batches++;
      tally.batchMessages += batch.messages.length;
      const size = variant.txSize || batch.messages.length;
      for (let i = 0; i < batch.messages.length && tally.track.count < events; i += size) {
        const chunk = batch.messages.slice(i, i + size);
        // Unreadable messages would be dead-lettered as in runConsumer; this topic has none.
        const chunkEvents = chunk.map(readEvent);
        const client = await pool.connect();
        try {
          await client.query('begin');
          const fresh = await recordProcessed(client, groupId, chunkEvents);
          // Apply each newly recorded event once (a duplicate within the chunk is applied once).
          const toApply = chunkEvents.filter((e) => fresh.delete(e.id.toLowerCase()));
          if (setBased) {
            if (toApply.length > 0)
              await client.query(effectsSql, [
                toApply.map((e) => e.id),
                toApply.map((e) => (e.data as OrderCreatedV1).orderId),
                toApply.map((e) => (e.data as OrderCreatedV1).totalCents),
              ]);
          } else {
            for (const event of toApply) {
              const data = event.data as OrderCreatedV1;
              await client.query(effectSql, [event.id, data.orderId, data.totalCents]);
            }
          }
          await client.query('commit');
          tally.transactions++;
        } catch (err) {
          await client.query('rollback').catch(() => {});
          throw err;
        } finally {
          client.release();
        }
        // Only after the commit: a crash before this redelivers the chunk, which dedups.
        const lastMessage = chunk[chunk.length - 1];
        if (lastMessage) resolveOffset(lastMessage.offset);
        tally.track.handled(chunk.length);
        await heartbeat();
      }
    },
  });
  return () => consumer.disconnect();
}
