import type { Consumer } from 'kafkajs';
import type { Logger } from 'pino';
import { exponentialDelayMs } from '../../backoff.ts';
import { settleWithin } from '../settleWithin.ts';
import { MemberLife } from './memberLife.ts';
import { type CommitOutcomes, MemberWatchdog } from './memberWatchdog.ts';

/**
 * A member silent this long (no heartbeat answered, no join, no batch) is replaced by a new one
 * (memberWatchdog.ts): a last resort for a member kafkajs has left stuck without a word. Members
 * kafkajs gives up on say so (memberLife.ts) and are replaced at once. Shorter silences (12 s,
 * then 45 s) replaced members that kafkajs was itself restarting after a broker outage, and every
 * replacement made the group rebalance again: the groups stopped for 40 s through a coordinator
 * kill and never caught up after two brokers were down (docs/local-kafka.md).
 */
const MIN_SILENCE_BEFORE_RESTART_MS = 600_000;
/** How long a replacement member may take to connect, join and run before it is given up. */
const START_BOUND_MS = 30_000;
/** How long a given-up member's disconnect (leaving the group) may take before it is left behind. */
const DISCONNECT_BOUND_MS = 5_000;
/**
 * The wait before replacing a member kafkajs gave up on: 1 s, doubling while each replacement is
 * given up too (a cause that outlives a member, such as a group member of another deployment
 * whose assignor this one does not share), up to 30 s.
 */
const REPLACE_BASE_MS = 1_000;
const REPLACE_CAP_MS = 30_000;

/**
 * Starts a new member; `watch` is called with its consumer before it connects, and `commits` is
 * told how each of its offset commits ended (memberWatchdog.ts reads a stuck member from them).
 */
export type StartMember = (watch: (consumer: Consumer) => void, commits: CommitOutcomes) => Promise<Consumer>;

export type SupervisedMember = {
  /** The member now in the group: a replaced one is never handed out again. */
  current(): Consumer;
  /** Why this process's member is not consuming (for /healthz), or undefined while it runs. */
  problem(): string | undefined;
  /**
   * No more replacements: called first when the consumer stops. Resolves once a replacement under
   * way has ended (its new member disconnected), so a stopped consumer leaves no connection open.
   */
  stopWatching(): Promise<void>;
};

type Supervision = {
  heartbeatIntervalMs: number;
  /** A member replaced: the offsets it resolved and did not commit are gone with it. */
  onReplaced(): void;
  logger: Logger;
};

/**
 * This process's one member of the consumer group, started, then replaced when kafkajs has given
 * up on it (a crash it does not restart, a stop nobody asked for: memberLife.ts), when its offset
 * commits have gone for 20 s to a coordinator that moved, with no rejoin, or, as a last resort,
 * when it has been silent for minutes (both memberWatchdog.ts). A member kafkajs is restarting
 * is left to kafkajs. The member replaced leaves the group if the coordinator answers, its
 * uncommitted offsets are forgotten (their chunks are redelivered and skipped as duplicates), and
 * a new kafkajs consumer looks the coordinator up and joins afresh.
 */
export async function superviseMember(
  startMember: StartMember,
  supervision: Supervision,
): Promise<SupervisedMember> {
  const supervisor = new MemberSupervisor(startMember, supervision);
  await supervisor.start();
  return supervisor;
}

class MemberSupervisor implements SupervisedMember {
  readonly #startMember: StartMember;
  readonly #supervision: Supervision;
  readonly #lives = new WeakMap<Consumer, MemberLife>();
  readonly #watchdog: MemberWatchdog;
  #member: Consumer | undefined;
  #starting: Consumer | undefined;
  #startFailure: string | undefined;
  #stopped = false;
  #replacing: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** Replacements in a row that have not joined: sets the next one's wait. */
  #attempts = 0;

  constructor(startMember: StartMember, supervision: Supervision) {
    this.#startMember = startMember;
    this.#supervision = supervision;
    const stallMs = Math.max(MIN_SILENCE_BEFORE_RESTART_MS, 4 * supervision.heartbeatIntervalMs);
    this.#watchdog = new MemberWatchdog(stallMs, () => this.#replace(), supervision.logger);
  }

  async start(): Promise<void> {
    try {
      this.#member = await this.#startMember(this.#watch, this.#watchdog);
    } catch (err) {
      this.#watchdog.close();
      throw err;
    }
    // A member kafkajs gave up on while it joined (a non-retriable join error) is replaced too.
    if (this.#lifeOf(this.#member)?.condition.state === 'given-up') this.#scheduleReplacement();
  }

  current(): Consumer {
    if (!this.#member) throw new Error('the group member has not started');
    return this.#member;
  }

  problem(): string | undefined {
    if (this.#startFailure) return `the group member could not be replaced: ${this.#startFailure}`;
    return this.#member ? this.#lifeOf(this.#member)?.problem() : 'the group member has not started';
  }

  async stopWatching(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#watchdog.close();
    if (this.#member) this.#lifeOf(this.#member)?.leaving();
    await this.#replacing;
  }

  readonly #watch = (consumer: Consumer): void => {
    this.#starting = consumer;
    const life = new MemberLife(consumer, {
      onJoined: () => {
        if (consumer === this.#member) this.#attempts = 0;
      },
      onGivenUp: (reason) => {
        this.#supervision.logger.warn({ reason }, 'kafkajs gave up on the group member: replacing it');
        this.#scheduleReplacement();
      },
    });
    this.#lives.set(consumer, life);
    this.#watchdog.watch(consumer);
  };

  #lifeOf(consumer: Consumer): MemberLife | undefined {
    return this.#lives.get(consumer);
  }

  #scheduleReplacement(): void {
    if (this.#stopped || this.#timer || this.#replacing) return;
    this.#attempts += 1;
    const delayMs = exponentialDelayMs(this.#attempts, REPLACE_BASE_MS, REPLACE_CAP_MS);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#replace();
    }, delayMs);
  }

  /** One replacement at a time; tried again later when the new member does not run either. */
  #replace(): Promise<void> {
    this.#replacing ??= this.#replaceMember()
      .then(() => {
        this.#startFailure = undefined;
        if (this.#member && this.#lifeOf(this.#member)?.condition.state === 'running') this.#attempts = 0;
      })
      .catch((err: unknown) => {
        this.#startFailure = err instanceof Error ? err.message : String(err);
        this.#supervision.logger.warn({ err }, 'starting a new group member failed; trying again');
      })
      .finally(() => {
        this.#replacing = undefined;
        const given = this.#member && this.#lifeOf(this.#member)?.condition.state === 'given-up';
        if (this.#startFailure || given) this.#scheduleReplacement();
      });
    return this.#replacing;
  }

  async #replaceMember(): Promise<void> {
    const { onReplaced, logger } = this.#supervision;
    const old = this.current();
    this.#lifeOf(old)?.leaving();
    onReplaced();
    // Leaves the group if the coordinator answers; a stuck member's disconnect may never end, and
    // its runner is stopped before the first await (kafkajs's stop), so it is left behind inert.
    await settleWithin(old.disconnect(), DISCONNECT_BOUND_MS).catch((err: unknown) =>
      logger.debug({ err }, 'the replaced member did not disconnect cleanly'),
    );
    // A start can hang (a join kafkajs keeps retrying while the brokers are still coming back):
    // past the bound it is given up, and tried again after a backoff.
    const started = await settleWithin(this.#startMember(this.#watch, this.#watchdog), START_BOUND_MS).catch(
      async (err) => {
        const starting = this.#starting;
        if (starting) {
          this.#lifeOf(starting)?.leaving();
          await settleWithin(starting.disconnect(), DISCONNECT_BOUND_MS).catch(() => {});
        }
        throw err;
      },
    );
    if (this.#stopped) {
      this.#lifeOf(started)?.leaving();
      await started.disconnect();
    } else this.#member = started;
  }
}
