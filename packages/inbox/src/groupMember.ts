import type { Consumer } from '@outbox/runtime/kafka';
import type { Logger } from 'pino';
import { MemberWatchdog } from './memberWatchdog.ts';
import type { OffsetCommits } from './offsetCommits.ts';

/**
 * A member silent this long (no heartbeat answered, no join, no batch) is replaced by a new one
 * (memberWatchdog.ts): a last resort for a member kafkajs has left for good. Shorter silences
 * (12 s, then 45 s) replaced members that kafkajs was itself restarting after a broker outage, and
 * every replacement made the group rebalance again: the groups stopped for 40 s through a
 * coordinator kill and never caught up after two brokers were down (docs/local-kafka.md).
 */
const MIN_SILENCE_BEFORE_RESTART_MS = 600_000;
/** How long a replacement member may take to connect, join and run before it is given up. */
const START_BOUND_MS = 30_000;
/** How long a silent member's disconnect (leaving the group) may take before it is left behind. */
const DISCONNECT_BOUND_MS = 5_000;
/** Starts a new member; `watch` is called with its consumer before it connects. */
export type StartMember = (watch: (consumer: Consumer) => void) => Promise<Consumer>;

export type SupervisedMember = {
  /** The member now in the group: a replaced one is never handed out again. */
  current(): Consumer;
  /** No more replacements: called first when the consumer stops. */
  stopWatching(): void;
};

/**
 * This process's one member of the consumer group, started and then replaced whenever it goes
 * silent (memberWatchdog.ts): the silent one leaves the group if the coordinator answers, its
 * uncommitted offsets are forgotten (their chunks are redelivered and skipped as duplicates), and
 * a new kafkajs consumer looks the coordinator up and joins afresh.
 */
export async function superviseMember(
  startMember: StartMember,
  {
    heartbeatIntervalMs,
    commits,
    logger,
  }: { heartbeatIntervalMs: number; commits: OffsetCommits; logger: Logger },
): Promise<SupervisedMember> {
  let watchdog: MemberWatchdog | undefined;
  let stopped = false;
  let starting: Consumer | undefined;
  const watch = (consumer: Consumer) => {
    starting = consumer;
    watchdog?.watch(consumer);
  };
  let member = await startMember(watch);
  const stallMs = Math.max(MIN_SILENCE_BEFORE_RESTART_MS, 4 * heartbeatIntervalMs);
  watchdog = new MemberWatchdog(
    stallMs,
    async () => {
      const silent = member;
      commits.forget();
      // Leaves the group if the coordinator answers; a stuck member's disconnect may never end, and
      // its runner is stopped before the first await (kafkajs's stop), so it is left behind inert.
      await settleWithin(silent.disconnect(), DISCONNECT_BOUND_MS).catch((err: unknown) =>
        logger.debug({ err }, 'the silent member did not disconnect cleanly'),
      );
      // A start can hang (a join kafkajs keeps retrying while the brokers are still coming back):
      // past the bound it is given up, and the watchdog tries again after another silence.
      const started = await settleWithin(startMember(watch), START_BOUND_MS).catch(async (err: unknown) => {
        await settleWithin(starting?.disconnect() ?? Promise.resolve(), DISCONNECT_BOUND_MS).catch(() => {});
        throw err;
      });
      if (stopped) await started.disconnect();
      else member = started;
    },
    logger,
  );
  watchdog.watch(member);
  return {
    current: () => member,
    stopWatching: () => {
      stopped = true;
      watchdog?.close();
    },
  };
}

/** Resolves or rejects as `promise` does, or rejects after `ms`. */
async function settleWithin<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
