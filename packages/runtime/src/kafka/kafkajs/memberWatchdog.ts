import type { Consumer } from 'kafkajs';
import type { Logger } from 'pino';
import { refusedAsNotTheCoordinator } from './coordinatorLoss.ts';

/**
 * Offset commits refused with "not the coordinator" for this long, with no join and no heartbeat
 * answered since: the member is stuck on a coordinator that moved (below). A member that finds the
 * new coordinator rejoins within seconds of the first refusal, and a join or a heartbeat ends the
 * count; commits that fail because no broker answers (an outage) do not start it.
 */
const STUCK_ON_A_MOVED_COORDINATOR_MS = 20_000;

/** What the watchdog learns of the member's offset commits (groupConsumer.ts reports them). */
export type CommitOutcomes = { committed(): void; refused(err: unknown): void };

/**
 * Restarts a group member that kafkajs has left stuck, by either of two signs:
 *
 * - **Silent** for `stallMs`: no heartbeat answered, no join, no batch processed. A member that
 *   works heartbeats every few seconds, idle or busy (the loop heartbeats while a chunk runs).
 * - **Committing to a coordinator that moved**, for STUCK_ON_A_MOVED_COORDINATOR_MS. When the
 *   coordinator moves back to a broker started again, kafkajs rejoins; a join answered "the
 *   coordinator is loading" is not retried as a join, and the member then fetches nothing and only
 *   sees its offset commits refused ("not the correct coordinator"), with no further join, for
 *   minutes (docs/local-kafka.md, "When the group coordinator dies"). The silence bound alone took
 *   that long to notice it, longer than a consumer should stop applying.
 *
 * A new kafkajs consumer looks the coordinator up and joins afresh.
 */
export class MemberWatchdog implements CommitOutcomes {
  #lastSign: number;
  /** Since when every offset commit has been refused as "not the coordinator", with no join since. */
  #refusedSince: number | undefined;
  #restarting = false;
  readonly #timer: NodeJS.Timeout;
  readonly #restart: () => Promise<void>;
  readonly #logger: Logger;
  readonly #now: () => number;

  constructor(stallMs: number, restart: () => Promise<void>, logger: Logger, now: () => number = Date.now) {
    this.#restart = restart;
    this.#logger = logger;
    this.#now = now;
    this.#lastSign = now();
    this.#timer = setInterval(
      () => {
        const silentMs = this.#now() - this.#lastSign;
        if (silentMs >= stallMs)
          this.#restartMember('consumer group member silent: restarting it', { silentMs });
      },
      Math.max(250, Math.floor(stallMs / 4)),
    );
  }

  /** Listens to a (new) consumer's signs of life. */
  watch(consumer: Consumer): void {
    const inTheGroup = () => {
      this.#refusedSince = undefined;
      this.alive();
    };
    consumer.on(consumer.events.HEARTBEAT, inTheGroup);
    consumer.on(consumer.events.GROUP_JOIN, inTheGroup);
    consumer.on(consumer.events.END_BATCH_PROCESS, () => this.alive());
    inTheGroup();
  }

  alive(): void {
    this.#lastSign = this.#now();
  }

  committed(): void {
    this.#refusedSince = undefined;
  }

  refused(err: unknown): void {
    if (!refusedAsNotTheCoordinator(err)) return;
    const now = this.#now();
    this.#refusedSince ??= now;
    const refusedMs = now - this.#refusedSince;
    if (refusedMs < STUCK_ON_A_MOVED_COORDINATOR_MS) return;
    this.#restartMember(
      'offset commits refused by a broker that is no longer the coordinator, and no rejoin: restarting the member',
      { refusedMs },
    );
  }

  close(): void {
    clearInterval(this.#timer);
  }

  #restartMember(message: string, fields: object): void {
    if (this.#restarting) return;
    this.#restarting = true;
    this.#logger.warn(fields, message);
    this.#restart()
      .catch((err: unknown) => this.#logger.warn({ err }, 'restarting a stuck member failed; trying again'))
      .finally(() => {
        // A failed restart is tried again after another bound of silence or of refusals.
        this.alive();
        this.#refusedSince = undefined;
        this.#restarting = false;
      });
  }
}
