import type { GroupMemberView, GroupView } from '../groupMembers.ts';
import type { Scenario, ScenarioContext } from '../scenario.ts';
import type { DatabaseName, ProcessName } from '../stack.ts';
import { INPUTS, systemTopics } from '../topics.ts';

/** One service after the other, as a deployment rolls them. */
const IN_TURN: DatabaseName[] = ['inventory', 'billing', 'orders'];
/** How long a group may take to hand every partition to a live member again. */
const SETTLE_WITHIN_MS = 120_000;
/**
 * How long a restarted instance may take to answer /healthz: it joins its group first, and a
 * classic group takes it in only once every member rejoined, on a busy 2-core machine well past
 * the 30 s other scenarios allow.
 */
const START_WITHIN_MS = 120_000;
/** After a group settled, the window stays open this long: its members start applying again within it. */
const AFTER_SETTLED_MS = 5_000;
/**
 * Long enough for a session timeout and three restarts under load on a busy machine (a run at a
 * load average of 25 to 80 took 320 s for them); a window still open when the load ended has
 * nothing to measure and is left out, with a line in the log.
 */
const LOAD = { rate: 15, durationMs: 360_000 };

export const clusterServiceRollingRestart: Scenario = {
  name: 'cluster-service-rolling-restart',
  breaks:
    'on a three-broker cluster with two instances of every service, one instance of inventory, billing and orders ' +
    'killed with kill -9 and left down until their groups dropped them, then started again; then the same ' +
    'instances stopped (SIGTERM: each leaves its group) and started again, one service after the other',
  expectation:
    'The instance that stays keeps applying the partitions it holds while the other leaves and comes back: on the ' +
    'consumer protocol (KIP-848) only the partitions that move wait, on the classic one every member stops while ' +
    'the group rebalances. A killed instance’s partitions wait for its session to time out, then the other applies ' +
    'them. Every event is applied once, in order per order.',
  needs: { cluster: true },
  load: LOAD,
  quiescenceTimeoutMs: 120_000,
  inject: async (context) => {
    // Ten seconds of load first: the figures compare each window with the 10 s before it.
    await context.sleep(12_000);
    await killOneInstanceOfEach(context);
    for (const service of IN_TURN) await restartOneInstance(context, service);
  },
};

/**
 * SIGTERM to the service's second instance, then start it again. Two windows are measured on the
 * partitions its twin holds throughout each: from the stop until the group settled with the twin
 * alone (what the twin held before), and from the start until the group settled with both again
 * (what the twin kept of all it held alone). A classic group's assignor may hand the twin other
 * partitions at each rebalance; the consumer protocol's moves only what it must.
 */
async function restartOneInstance(context: ScenarioContext, service: DatabaseName): Promise<void> {
  const instance = `${service}-2` as ProcessName;
  const before = await settled(context, service, 2);
  context.fault(`stop ${instance} (SIGTERM: it leaves the group)`);
  const stoppedAt = Date.now();
  await context.stack.process(instance).stop();
  const alone = await settled(context, service, 1);
  await context.sleep(AFTER_SETTLED_MS);
  const staying = alone.members[0]?.memberId;
  const window = (label: string, fromMs: number, from: GroupView, to: GroupView) => {
    const held = new Set(holdings(to, staying));
    const kept = holdings(from, staying).filter((partition) => held.has(partition));
    context.log(`${service}, ${label}: the staying member kept ${kept.length} partitions`);
    if (!underLoad(context, label)) return;
    context.measurePartitions({
      kind: 'staying',
      group: service,
      label,
      fromMs,
      toMs: Date.now(),
      partitions: kept,
      moved: allPartitions(to).length - kept.length,
    });
  };
  window(`${instance} stopped (SIGTERM), the group settled without it`, stoppedAt, before, alone);
  context.fault(`start ${instance} again`);
  const startedAt = Date.now();
  await context.stack.restart(instance, {}, START_WITHIN_MS);
  context.restored(`${instance} restarted`);
  const after = await settled(context, service, 2);
  await context.sleep(AFTER_SETTLED_MS);
  window(`${instance} started again, the group settled with it`, startedAt, alone, after);
}

/**
 * kill -9 of every service's second instance at once, left down until each group handed its
 * partitions to the other instance (its session timed out), then started again. Which member
 * was killed shows only then: the one the group dropped.
 */
async function killOneInstanceOfEach(context: ScenarioContext): Promise<void> {
  const before = await Promise.all(IN_TURN.map((service) => settled(context, service, 2)));
  const instances = IN_TURN.map((service) => `${service}-2` as ProcessName);
  context.fault(`kill -9 ${instances.join(', ')}: each group waits for its session to time out`);
  const fromMs = Date.now();
  await Promise.all(instances.map((instance) => context.stack.process(instance).kill()));
  const survivors = await Promise.all(IN_TURN.map((service) => settled(context, service, 1)));
  await context.sleep(AFTER_SETTLED_MS);
  const toMs = Date.now();
  for (const [i, service] of IN_TURN.entries()) {
    const survivor = survivors[i]?.members[0]?.memberId;
    const killed = before[i]?.members.find((member) => member.memberId !== survivor);
    if (!underLoad(context, `${service}-2 killed`)) continue;
    context.measurePartitions({
      kind: 'takeover',
      group: service,
      label: `${service}-2 killed (kill -9)`,
      fromMs,
      toMs,
      partitions: killed?.partitions ?? [],
      sessionTimeoutMs: await context
        .groups()
        .sessionTimeoutMs(context.stack.groups[service], before[i]?.protocol),
    });
  }
  context.fault(`start ${instances.join(', ')} again`);
  await Promise.all(instances.map((instance) => context.stack.restart(instance, {}, START_WITHIN_MS)));
  context.restored('every instance back');
}

/** Whether the load still runs; a window that closes after it is not measured (nothing came to apply). */
function underLoad(context: ScenarioContext, label: string): boolean {
  if (context.elapsed() < LOAD.durationMs) return true;
  context.log(`${label}: the load had ended before the window closed; not measured`);
  return false;
}

/** The partitions a member holds in a view of its group. */
const holdings = (view: GroupView, memberId: string | undefined): string[] =>
  view.members.find((member) => member.memberId === memberId)?.partitions ?? [];

const allPartitions = (view: GroupView): string[] => view.members.flatMap((member) => member.partitions);

/**
 * Wait until the service's group has `members` members and each partition of the topics it
 * consumes is held by exactly one of them (a rebalance or a revocation done), looking every
 * 250 ms; past the deadline, the last view, with a line in the log.
 */
async function settled(context: ScenarioContext, service: DatabaseName, members: number): Promise<GroupView> {
  const group = context.stack.groups[service];
  const { events } = systemTopics(context.stack.topicPrefix);
  const topics = INPUTS[service].map((source) => events[source]);
  const deadline = Date.now() + SETTLE_WITHIN_MS;
  // A metadata request may fail on a busy machine (kafkajs: "Broker not connected"): asked again.
  let partitions = 0;
  while (partitions === 0 && Date.now() < deadline) {
    partitions = await context.cluster
      .partitionLeaders(topics)
      .then((leaders) => leaders.length)
      .catch(() => 0);
    if (partitions === 0) await context.sleep(500);
  }
  let view: GroupView = { protocol: undefined, members: [] };
  for (;;) {
    view = await context
      .groups()
      .describe(group)
      .catch(() => view);
    if (isSettled(view.members, members, partitions)) return view;
    if (Date.now() > deadline) {
      context.log(`${group} not settled with ${members} members after ${SETTLE_WITHIN_MS} ms`);
      return view;
    }
    await context.sleep(250);
  }
}

/** `count` members, each holding something, and no partition held twice or left out. */
function isSettled(members: GroupMemberView[], count: number, partitions: number): boolean {
  if (members.length !== count || members.some((member) => member.partitions.length === 0)) return false;
  const held = members.flatMap((member) => member.partitions);
  return new Set(held).size === held.length && held.length === partitions;
}
