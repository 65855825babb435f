import { setTimeout as sleep } from 'node:timers/promises';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import type { RelayMode } from './invariants/snapshot.ts';
import { type ChaosStack, DATABASES, type DatabaseName } from './stack.ts';
import { committedOffsets, consumerLag, INPUTS, readTopics, systemTopics, topicEnds } from './topics.ts';

/**
 * Past its deadline the wait goes on while the system still moves, and gives up once nothing has
 * moved for this long: longer than the longest pause a healthy system takes, a group waiting out
 * a killed member's 30 s session before it consumes again, with room for a loaded machine. So a
 * slow machine that is still catching up gets the time it needs, and a stall still fails.
 */
export const STALL_MS = 45_000;
/** Never past this many deadlines, moving or not: the scenario's own time bound stays bounded. */
const MAX_DEADLINES = 2;
/** How often the outstanding work is written down for the report's trail. */
const TRAIL_EVERY_MS = 5_000;

export type Quiescence = {
  reached: boolean;
  /** When it was reached (epoch ms), or when we gave up. */
  at: number;
  /** What was still outstanding at the last look (empty when reached). */
  outstanding: string[];
  /**
   * What was outstanding about every 5 s of the wait, at milliseconds since it began: work that
   * falls is a slow system, work that stands still a stall.
   */
  trail: { afterMs: number; outstanding: string[] }[];
  /** When it gave up: how long nothing had moved by then. */
  stillForMs?: number;
};

/** The system waited for: its stack, its broker and its event topics. */
type System = { stack: ChaosStack; kafkaBrokers: string[]; topics: Record<DatabaseName, string> };

/**
 * Whether to look again: always before the deadline; past it while something moved within
 * STALL_MS (an order decided, an event published or applied, an offset committed), up to
 * MAX_DEADLINES deadlines in all.
 */
export function keepWaiting(
  now: number,
  { started, timeoutMs, movedAt }: { started: number; timeoutMs: number; movedAt: number },
): boolean {
  if (now <= started + timeoutMs) return true;
  return now <= started + MAX_DEADLINES * timeoutMs && now - movedAt <= STALL_MS;
}

/**
 * Wait until the system has nothing left to do: no order PENDING (unless told that PENDING orders
 * may be stuck for good, as a naive write mode leaves them), no outbox row pending or in
 * flight (failed ones are the dead-letter invariant's business), and every consumer group has
 * committed up to the end of its topics. Gives up at the deadline, or later while work still
 * moves (keepWaiting), and says what was left and how it went.
 * In debezium mode rows are never marked: an outbox row is done once its event is on its topic.
 */
export async function waitForQuiescence(
  stack: ChaosStack,
  kafkaBrokers: string[],
  timeoutMs: number,
  {
    pendingOrdersAreWork = true,
    relayMode = 'polling',
  }: { pendingOrdersAreWork?: boolean; relayMode?: RelayMode } = {},
): Promise<Quiescence> {
  const started = Date.now();
  const system: System = { stack, kafkaBrokers, topics: systemTopics(stack.topicPrefix).events };
  let outstanding: string[] = [];
  const trail: Quiescence['trail'] = [];
  // Without the PENDING orders to go by, a reply written between the outbox look and the lag look
  // could pass unseen: two quiet looks in a row, then.
  const quietLooksNeeded = pendingOrdersAreWork ? 1 : 2;
  let quietLooks = 0;
  let mostDone = -1;
  let movedAt = started;
  while (true) {
    outstanding = await lookForWork(system, pendingOrdersAreWork, relayMode).catch((err: Error) => [
      `could not look: ${err.message}`,
    ]);
    const now = Date.now();
    if (trail.length === 0 || now - started >= trail.length * TRAIL_EVERY_MS)
      trail.push({ afterMs: now - started, outstanding });
    quietLooks = outstanding.length === 0 ? quietLooks + 1 : 0;
    if (quietLooks >= quietLooksNeeded) return { reached: true, at: now, outstanding, trail };
    // A look that fails moves nothing: a system that cannot be looked at is not making progress.
    const done = await workDone(system).catch(() => -1);
    if (done > mostDone) {
      mostDone = done;
      movedAt = now;
    }
    if (!keepWaiting(now, { started, timeoutMs, movedAt })) {
      if (trail.at(-1)?.afterMs !== now - started) trail.push({ afterMs: now - started, outstanding });
      return { reached: false, at: now, outstanding, trail, stillForMs: now - movedAt };
    }
    await sleep(500);
  }
}

/**
 * Everything the system has done so far, as one count that only grows while it works: orders
 * decided, outbox rows published, events on the topics, events applied (processed_events) and
 * offsets committed by the groups.
 */
async function workDone({ stack, kafkaBrokers, topics }: System): Promise<number> {
  let done = 0;
  for (const database of DATABASES) {
    const [row] = await queryOnce<{ n: number }>(
      stack.databases[database].url,
      `select (select count(*) from outbox where status = 'published')
            + (select count(*) from processed_events)
            ${database === 'orders' ? "+ (select count(*) from orders where status <> 'PENDING')" : ''} as n`,
    );
    done += Number(row?.n ?? 0);
  }
  for (const size of (await topicEnds(kafkaBrokers, Object.values(topics))).values()) done += size;
  return (
    done +
    (await committedOffsets(
      kafkaBrokers,
      DATABASES.map((consumer) => ({
        groupId: stack.groups[consumer],
        topics: INPUTS[consumer].map((source) => topics[source]),
      })),
    ))
  );
}

async function lookForWork(
  system: System,
  pendingOrdersAreWork: boolean,
  relayMode: RelayMode,
): Promise<string[]> {
  const { stack, kafkaBrokers, topics } = system;
  const outstanding: string[] = [];
  if (pendingOrdersAreWork) {
    const [pending] = await queryOnce<{ n: number }>(
      stack.databases.orders.url,
      `select count(*)::int as n from orders where status = 'PENDING'`,
    );
    if (pending?.n) outstanding.push(`${pending.n} orders PENDING`);
  }
  if (relayMode === 'debezium') outstanding.push(...(await rowsNotOnTopics(system)));
  else {
    for (const database of DATABASES) {
      const [unpublished] = await queryOnce<{ n: number }>(
        stack.databases[database].url,
        `select count(*)::int as n from outbox where status in ('pending', 'in_flight')`,
      );
      if (unpublished?.n) outstanding.push(`${unpublished.n} ${database} outbox rows not yet published`);
    }
  }
  if (outstanding.length > 0) return outstanding; // lag is only worth asking the broker about now
  for (const consumer of DATABASES) {
    const lag = await consumerLag(
      kafkaBrokers,
      stack.groups[consumer],
      INPUTS[consumer].map((source) => topics[source]),
    );
    if (lag > 0) outstanding.push(`${consumer} consumer ${lag} messages behind`);
  }
  return outstanding;
}

/**
 * Debezium mode: the outbox rows whose event is not on their topic yet. The topics' sizes first
 * (fewer records than rows: not there yet, no need to read them), then the event ids themselves.
 */
async function rowsNotOnTopics({ stack, kafkaBrokers, topics }: System): Promise<string[]> {
  const rows = {} as Record<DatabaseName, string[]>;
  for (const database of DATABASES) {
    const ids = await queryOnce<{ id: string }>(stack.databases[database].url, 'select id::text from outbox');
    rows[database] = ids.map((row) => row.id);
  }
  const sizes = await topicEnds(kafkaBrokers, Object.values(topics));
  const short = DATABASES.filter((database) => (sizes.get(topics[database]) ?? 0) < rows[database].length);
  if (short.length > 0)
    return short.map(
      (database) => `${database} outbox: ${rows[database].length} rows, fewer records on its topic`,
    );
  const messages = await readTopics(kafkaBrokers, Object.values(topics));
  const outstanding: string[] = [];
  for (const database of DATABASES) {
    const onTopic = new Set((messages.get(topics[database]) ?? []).map((message) => message.eventId));
    const missing = rows[database].filter((id) => !onTopic.has(id)).length;
    if (missing > 0) outstanding.push(`${missing} ${database} outbox rows not yet on ${topics[database]}`);
  }
  return outstanding;
}
