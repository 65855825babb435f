import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import pg from 'pg';
import type { OwnConnect } from '../faults/ownConnect.ts';
import type { Scenario, ScenarioContext } from '../scenario.ts';
import { DATABASES } from '../stack.ts';
import { systemTopics } from '../topics.ts';
import { awaitConnectorsRunning, busiestLeader } from './support.ts';

/**
 * The race this scenario aims at. Connect's producer sends to every partition at once, so when a
 * partition leader dies the events of the other partitions can be acknowledged before an earlier
 * event of the dead leader's partitions, which the producer is still retrying. Connect commits a
 * source offset only below the oldest unacknowledged event; Debezium, when Connect then calls its
 * commit(), confirms to PostgreSQL the offset of the last event acknowledged (commitRecord), past
 * the one being retried. A Connect death before that event is acknowledged leaves the slot past it.
 *
 * While a broker of three is down, no event is acknowledged at all: every partition has a replica
 * there, and acks=all waits for it until the controller fences the broker (broker.session.timeout.ms)
 * and drops it from the in-sync replicas. The slot's confirmed position stands still meanwhile.
 * Once the new leaders are elected, the slot's next move is a confirmation after acknowledgements
 * resumed, while the producer may still be finding the new leaders: the worker is killed right then.
 */
async function killLeaderThenConnect(
  context: ScenarioContext,
  { afterFencingMs }: { afterFencingMs?: number } = {},
): Promise<void> {
  const cluster = context.cluster;
  const connect = context.connect;
  await context.sleep(6_000);
  const { nodeId, leads, of } = await busiestLeader(context);
  const logFrom = fileSize(connect.worker.logFile);
  const killedAt = Date.now();
  context.fault(`kill -9 broker ${nodeId}, leader of ${leads} of the ${of} event partitions`);
  await cluster.node(nodeId).kill();

  // Until the new leaders are known no event is acknowledged; a slot that moves before then is
  // only catching up with what was acknowledged before the kill.
  const elected = await waitForNewLeaders(context, nodeId, 60_000);
  const slots = await watchSlots(context, Object.values(connect.slots));
  // Without a delay: at the slots' first move, the window is as short as the producer's metadata
  // refresh. With one: partitions stay refused for as long as the broker is away.
  const moved = afterFencingMs === undefined ? await slots.firstMove(30_000) : undefined;
  if (afterFencingMs !== undefined) await context.sleep(afterFencingMs);
  const retries = linesSince(connect.worker.logFile, logFrom, /WARN.*connector-producer/).length;
  context.fault(
    `kill -9 the Kafka Connect worker, ${Date.now() - killedAt} ms after the broker ` +
      `(new leaders seen at ${elected ?? 'never'} ms): ` +
      (afterFencingMs === undefined
        ? `${moved ? `slot ${moved} confirmed a position since` : 'no slot moved in 30 s'}; `
        : `${afterFencingMs} ms after them; `) +
      `${retries} producer warnings in Connect's log since the broker kill; load average ${loadavg()[0]?.toFixed(1)}`,
  );
  await connect.worker.kill();
  const confirmedAtKill = await slots.positions().finally(() => slots.close());

  await context.sleep(3_000);
  const restartFrom = fileSize(connect.worker.logFile);
  context.fault('start the Kafka Connect worker again (same group, same internal topics)');
  await connect.worker.start();
  await connect.worker.waitUntilReady(120_000);
  await context.sleep(Math.max(0, 10_000 - (Date.now() - killedAt)));
  context.fault(`start broker ${nodeId} again (same data dir)`);
  await cluster.node(nodeId).start();
  await cluster.waitUntilReady(180_000);
  await awaitConnectorsRunning(context, 180_000);
  // The restarted tasks log the offsets they resume from once they start streaming.
  for (let waited = 0; waited < 30_000; waited += 500) {
    if (linesSince(connect.worker.logFile, restartFrom, /Found previous partition offset/).length >= 3) break;
    await context.sleep(500);
  }
  context.fault(`seen: ${slotsAgainstOffsets(connect, confirmedAtKill, restartFrom)}`);
}

/** Milliseconds until no partition of the event topics is led by `nodeId`, or undefined at the deadline. */
async function waitForNewLeaders(
  context: ScenarioContext,
  nodeId: number,
  timeoutMs: number,
): Promise<number | undefined> {
  const started = Date.now();
  const topics = Object.values(systemTopics(context.stack.topicPrefix).events);
  for (const deadline = started + timeoutMs; Date.now() < deadline; await context.sleep(100)) {
    const partitions = await context.cluster.partitionLeaders(topics).catch(() => undefined);
    if (partitions?.every(({ leader }) => leader >= 0 && leader !== nodeId)) return Date.now() - started;
  }
  return undefined;
}

/**
 * Each slot's position at the kill against the source offset Connect had committed for its
 * connector, as the restarted worker logs it: a slot past that offset means Debezium confirmed
 * events Connect had not committed, and any of them still unacknowledged at the kill is skipped.
 */
function slotsAgainstOffsets(connect: OwnConnect, confirmed: Map<string, bigint>, from: number): string {
  const found = linesSince(connect.worker.logFile, from, /Found previous partition offset/);
  return DATABASES.map((database) => {
    const line = found.find((text) => text.includes(`-${database}}]`));
    const committed = line?.match(/lsn_commit=(\d+)/)?.[1];
    const slot = confirmed.get(connect.slots[database]);
    if (committed === undefined || slot === undefined) return `${database}: no offset logged`;
    const ahead = slot - BigInt(committed);
    return `${database} slot ${ahead > 0n ? `${ahead} bytes past` : ahead === 0n ? 'at' : `${-ahead} bytes before`} Connect's committed offset`;
  }).join(', ');
}

/** Each slot's confirmed_flush_lsn, in bytes from 0/0. */
async function confirmedPositions(client: pg.Client, slots: string[]): Promise<Map<string, bigint>> {
  const { rows } = await client.query<{ slot_name: string; confirmed: string | null }>(
    `select slot_name, (confirmed_flush_lsn - '0/0'::pg_lsn)::text as confirmed
       from pg_replication_slots
      where slot_name = any($1::text[])`,
    [slots],
  );
  return new Map(rows.map((row) => [row.slot_name, BigInt(row.confirmed ?? '0')]));
}

/** Watches the slots on one connection: the kill must not wait for a new one on a busy server. */
async function watchSlots(context: ScenarioContext, slots: string[]) {
  const client = new pg.Client({ connectionString: context.stack.databases.orders.url });
  await client.connect();
  const since = await confirmedPositions(client, slots);
  return {
    /** The first slot whose confirmed position passes the one it had at the start, or undefined at the deadline. */
    firstMove: async (timeoutMs: number): Promise<string | undefined> => {
      for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await context.sleep(20)) {
        const now = await confirmedPositions(client, slots);
        const moved = slots.find((slot) => (now.get(slot) ?? 0n) > (since.get(slot) ?? 0n));
        if (moved) return moved;
      }
      return undefined;
    },
    positions: () => confirmedPositions(client, slots),
    close: () => client.end(),
  };
}

/** The lines of `file` from byte `from` on that match `pattern`. */
function linesSince(file: string, from: number, pattern: RegExp): string[] {
  const length = fileSize(file) - from;
  if (length <= 0) return [];
  const buffer = Buffer.alloc(length);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buffer, 0, length, from);
  } finally {
    closeSync(fd);
  }
  return buffer
    .toString('utf8')
    .split('\n')
    .filter((line) => pattern.test(line));
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

const BREAKS =
  'on a three-broker cluster, CDC mode: kill -9 of the broker leading the most event partitions; once the ' +
  'others lead them all, kill -9 of the Kafka Connect worker at the next move of a replication slot, while ' +
  "the connectors' producers may still be retrying the dead leader's partitions; both started again";

const BREAKS_RF2 =
  'the same on event topics at replication factor 2 (min.insync.replicas 2), as on a cluster larger than the ' +
  'replication factor: once the broker is fenced, the partitions with no replica on it are acknowledged while ' +
  'those with one are refused (one in-sync replica left); Connect killed 5 s after the fencing';

export const cdcClusterLeaderThenConnectKill: Scenario = {
  name: 'cdc-cluster-leader-then-connect-kill',
  breaks: BREAKS,
  expectation:
    'Every outbox row reaches its topic. While the broker is down no partition is acknowledged (each has a ' +
    'replica on it); once it is fenced all resume together, so Debezium rarely confirms past an event still ' +
    'being retried. Duplicates, nothing lost.',
  // A PostgreSQL of its own: two instances of every process on the cluster, beside other runs, can
  // use up the shared server's connections.
  needs: { cluster: true, cdc: true, privatePostgres: true },
  load: { rate: 40, durationMs: 30_000 },
  quiescenceTimeoutMs: 120_000,
  inject: killLeaderThenConnect,
};

export const cdcClusterLeaderThenConnectKillRf2: Scenario = {
  name: 'cdc-cluster-leader-then-connect-kill-rf2',
  breaks: BREAKS_RF2,
  expectation:
    'Every outbox row reaches its topic, provided the slot is never confirmed past an event Kafka has not ' +
    'acknowledged; at least once nothing guarantees it (Debezium confirms the last event acknowledged), which ' +
    'this scenario probes, and the restarted worker would then never publish the events in between.',
  needs: { cluster: true, cdc: true, privatePostgres: true },
  stack: { kafkaReplicationFactor: 2 },
  load: { rate: 40, durationMs: 30_000 },
  quiescenceTimeoutMs: 120_000,
  inject: (context) => killLeaderThenConnect(context, { afterFencingMs: 5_000 }),
};

export const cdcClusterLeaderThenConnectKillRf2ExactlyOnce: Scenario = {
  name: 'cdc-cluster-leader-then-connect-kill-rf2-exactly-once',
  breaks: `${BREAKS_RF2}; Connect with exactly-once source support`,
  expectation:
    "Each poll's records and its source offset commit in one Kafka transaction, and Connect hands Debezium a " +
    'record only once its transaction committed: the slot never passes an event still waiting. Nothing lost, ' +
    'no duplicate for read_committed consumers.',
  needs: { cluster: true, cdc: true, privatePostgres: true, exactlyOnceSource: true },
  stack: { kafkaReplicationFactor: 2 },
  load: { rate: 40, durationMs: 30_000 },
  quiescenceTimeoutMs: 120_000,
  inject: (context) => killLeaderThenConnect(context, { afterFencingMs: 5_000 }),
};
