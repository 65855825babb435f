import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { type ChaosStack, DATABASES, type DatabaseName } from './stack.ts';
import { checkerKafka, systemTopics } from './topics.ts';

/**
 * The longest time, while the load ran, in which the system published no event / applied none;
 * and the same for each consumer group, by the database it applies to (orders, inventory, billing).
 */
export type ProgressGaps = {
  longestWithoutPublishingMs: number;
  longestWithoutApplyingMs: number;
  longestWithoutApplyingMsByGroup: Record<DatabaseName, number>;
};

type ProgressWatch = { stop(): Promise<ProgressGaps> };

/**
 * Counts, a few times a second, the events the relays have marked published and the events the
 * consumers have applied (processed_events), across the three databases, and keeps the longest
 * stretch in which either count stood still: the window a fault opened, in which the load kept
 * coming and nothing moved. Meant to run exactly while the load runs (a steady stream, so any
 * stretch without progress is the system's, not the load's).
 *
 * With `cdcBrokers` (debezium mode, where nothing marks rows published) "published" is the number
 * of records on the event topics instead, read from the broker's end offsets.
 */
export function startProgressWatch(
  stack: ChaosStack,
  { everyMs = 200, cdcBrokers }: { everyMs?: number; cdcBrokers?: string[] } = {},
): ProgressWatch {
  const pools = DATABASES.map((name) => new pg.Pool({ connectionString: stack.databases[name].url, max: 1 }));
  // An idle client whose server restarts (postgres-restart) emits 'error' on its pool.
  for (const pool of pools) pool.on('error', () => {});
  const onTopics = cdcBrokers
    ? topicRecords(cdcBrokers, Object.values(systemTopics(stack.topicPrefix).events))
    : undefined;
  const published = stillness();
  const applied = stillness();
  // Each service's database holds the processed_events of its own consumer group only.
  const appliedBy = { orders: stillness(), inventory: stillness(), billing: stillness() };
  let stopped = false;

  const sample = async () => {
    // A database being restarted by the scenario answers nothing: that sample is skipped.
    const counts = await countInDatabases(pools).catch(() => undefined);
    if (!counts) return;
    // A broker that is down makes the count hang or fail: nothing published, and the applied
    // count (from the databases) must not wait for it, or its gap would be missed.
    const onTopic = onTopics
      ? await Promise.race([onTopics.count(), sleep(1000).then(() => undefined)]).catch(() => undefined)
      : undefined;
    const now = Date.now();
    const sum = (key: 'published' | 'applied') => counts.reduce((total, count) => total + count[key], 0);
    published.sample(onTopics ? (onTopic ?? published.last ?? 0) : sum('published'), now);
    applied.sample(sum('applied'), now);
    DATABASES.forEach((name, i) => {
      appliedBy[name].sample(counts[i]?.applied ?? 0, now);
    });
  };

  const loop = (async () => {
    while (!stopped) {
      const started = Date.now();
      await sample();
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, everyMs - (Date.now() - started))));
    }
  })();

  return {
    async stop() {
      stopped = true;
      await loop;
      await Promise.allSettled(pools.map((pool) => pool.end()));
      await onTopics?.close();
      return {
        longestWithoutPublishingMs: published.longest,
        longestWithoutApplyingMs: applied.longest,
        longestWithoutApplyingMsByGroup: {
          orders: appliedBy.orders.longest,
          inventory: appliedBy.inventory.longest,
          billing: appliedBy.billing.longest,
        },
      };
    },
  };
}

/** A count sampled over time, and the longest stretch in which it did not grow. */
function stillness() {
  let since = 0;
  const state = {
    last: undefined as number | undefined,
    longest: 0,
    sample(count: number, now: number) {
      if (state.last === undefined || count > state.last) since = now;
      state.last = count;
      state.longest = Math.max(state.longest, now - since);
    },
  };
  return state;
}

/** Events marked published and events applied, per database. */
function countInDatabases(pools: pg.Pool[]): Promise<{ published: number; applied: number }[]> {
  return Promise.all(
    pools.map((pool) =>
      pool
        .query<{ published: string; applied: string }>(
          `select (select count(*) from outbox where status = 'published') as published,
                  (select count(*) from processed_events) as applied`,
        )
        .then(({ rows }) => ({ published: Number(rows[0]?.published), applied: Number(rows[0]?.applied) })),
    ),
  );
}

/** Records on the topics (end offsets summed), through one admin client kept for the whole watch. */
function topicRecords(
  brokers: string[],
  topics: string[],
): { count(): Promise<number>; close(): Promise<void> } {
  const admin = checkerKafka(brokers, 'chaos-progress').admin();
  const connected = admin.connect();
  return {
    count: async () => {
      await connected;
      let records = 0;
      for (const topic of topics) {
        // A topic not created yet holds nothing.
        const offsets = await admin.fetchTopicOffsets(topic).catch(() => []);
        for (const partition of offsets) records += Number(partition.high);
      }
      return records;
    },
    close: async () => {
      await connected.catch(() => {});
      await admin.disconnect();
    },
  };
}
