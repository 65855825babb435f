import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceProcess } from '@outbox/devstack/service-process';
import pg from 'pg';
import { describeConnectors } from '../faults/ownConnect.ts';
import type { ScenarioContext } from '../scenario.ts';
import type { ProcessName } from '../stack.ts';
import { systemTopics } from '../topics.ts';

/** The scenario's own broker killed or stopped `afterMs` into the load, started again `downMs` later. */
export async function brokerOutage(
  context: ScenarioContext,
  {
    afterMs,
    downMs,
    how,
    back,
  }: { afterMs: number; downMs: number; how: `${'kill -9' | 'stop'} the broker${string}`; back: string },
): Promise<void> {
  const broker = context.broker;
  await context.sleep(afterMs);
  context.fault(how);
  await (how.startsWith('kill') ? broker.kill() : broker.stop());
  await context.sleep(downMs);
  context.fault(back);
  await broker.start();
  await broker.waitUntilReady(120_000);
  context.restored('broker ready');
}

/**
 * Wait until every connector and task runs again (Connect restarts them by itself after a worker,
 * broker or database outage) and record it as the moment the system was whole again.
 */
export async function awaitConnectorsRunning(context: ScenarioContext, timeoutMs = 120_000): Promise<void> {
  const connect = context.connect;
  await connect.waitUntilRunning(timeoutMs);
  context.restored(`connectors running: ${await describeConnectors(connect)}`);
}

/** The node that leads the most partitions of the system's event topics now, and how many it leads. */
export async function busiestLeader(
  context: ScenarioContext,
): Promise<{ nodeId: number; leads: number; of: number }> {
  const { events } = systemTopics(context.stack.topicPrefix);
  const partitions = await context.cluster.partitionLeaders(Object.values(events));
  const leads = new Map<number, number>();
  for (const { leader } of partitions) leads.set(leader, (leads.get(leader) ?? 0) + 1);
  const [nodeId, count] = [...leads].sort((a, b) => b[1] - a[1])[0] ?? [1, 0];
  return { nodeId, leads: count, of: partitions.length };
}

/**
 * Wait until the relay holds a lease on some outbox rows (it is mid-batch), so that a kill lands
 * between its claim and its mark. Gives up after `timeoutMs` and returns false (the kill then
 * lands between batches, which is still a valid crash, just a milder one).
 */
export async function waitUntilMidBatch(
  databaseUrl: string,
  relay: string,
  timeoutMs = 10_000,
): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(5)) {
      const { rows } = await client.query<{ leased: boolean }>(
        `select exists (select 1 from outbox where status = 'in_flight' and lease_owner = $1) as leased`,
        [relay],
      );
      if (rows[0]?.leased) return true;
    }
    return false;
  } finally {
    await client.end();
  }
}

/** kill -9 a process of the stack and start it again after `downMs`. */
export async function killAndRestart(
  context: ScenarioContext,
  name: ProcessName,
  downMs: number,
  why = '',
): Promise<ServiceProcess> {
  context.fault(`kill -9 ${name}${why}`);
  await context.stack.process(name).kill();
  await context.sleep(downMs);
  const restarted = await context.stack.restart(name);
  context.restored(`${name} restarted`);
  return restarted;
}

/**
 * Start a process with a fault armed that makes it kill itself, and wait until it has. A process
 * whose fault fires before its /healthz answered counts too: startService then throws.
 * With `trigger`, one order of the scenario's own is placed once the process is up, so the fault
 * has an event to fire on even when the load has already ended (a slow restart on a busy machine).
 */
export async function startAndAwaitCrash(
  context: ScenarioContext,
  name: ProcessName,
  faultEnv: Record<string, string>,
  { timeoutMs = 30_000, trigger = false }: { timeoutMs?: number; trigger?: boolean } = {},
): Promise<boolean> {
  let started: ServiceProcess;
  try {
    started = await context.stack.restart(name, faultEnv);
  } catch {
    return true; // died during startup, from the fault
  }
  if (trigger) await placeTriggerOrder(context);
  const exited = await Promise.race([started.exited(), sleep(timeoutMs).then(() => undefined)]);
  if (exited) return true;
  await started.stop(); // the fault never fired (nothing to do in time): carry on without it
  return false;
}

/**
 * One valid order placed by the scenario itself (not the load generator), retried for a while in
 * case the orders API is restarting too. The checker treats it like any order the client did not
 * hear back about: it must be committed with its event, decided and applied once like the rest.
 */
async function placeTriggerOrder(context: ScenarioContext, timeoutMs = 20_000): Promise<void> {
  const body = JSON.stringify({
    customerId: 'chaos-trigger',
    currency: 'EUR',
    items: [{ sku: 'KB-101', quantity: 1 }],
  });
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(500)) {
    try {
      const res = await fetch(`${context.stack.process('orders').url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(5_000),
      });
      if (res.status === 201) {
        context.log('placed a trigger order for the armed fault');
        return;
      }
    } catch {
      // the orders API is restarting: try again
    }
  }
  context.log('could not place a trigger order');
}

/** Java's String.hashCode, which Kafka uses to place a group on a `__consumer_offsets` partition. */
function javaHash(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
  return hash;
}

/**
 * The node coordinating the most of the stack's consumer groups now, and the groups it coordinates.
 * A group's coordinator is the leader of `__consumer_offsets` partition
 * `(javaHash(groupId) & 0x7fffffff) % partitions` (offsets.topic.num.partitions: 50 by default, 1
 * on the devstack's brokers, where one node coordinates every group).
 */
export async function busiestCoordinator(
  context: ScenarioContext,
): Promise<{ nodeId: number; groups: string[] }> {
  const leaders = await context.cluster.partitionLeaders(['__consumer_offsets']);
  const byNode = new Map<number, string[]>();
  for (const group of Object.values(context.stack.groups)) {
    const partition = (javaHash(group) & 0x7fffffff) % leaders.length;
    const leader = leaders.find((p) => p.partition === partition)?.leader;
    if (leader === undefined || leader < 0) throw new Error(`group ${group} has no coordinator now`);
    byNode.set(leader, [...(byNode.get(leader) ?? []), group]);
  }
  const [nodeId, groups] = [...byNode].sort((a, b) => b[1].length - a[1].length)[0] ?? [1, []];
  return { nodeId, groups };
}
