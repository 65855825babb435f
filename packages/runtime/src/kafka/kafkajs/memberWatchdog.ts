import type { Consumer } from 'kafkajs';
import type { Logger } from 'pino';

/**
 * Restarts a group member that has shown no sign of life for `stallMs`: no heartbeat answered, no
 * join, no batch processed. A member that works heartbeats every few seconds, idle or busy (the
 * loop heartbeats while a chunk runs), so silence this long means kafkajs is stuck.
 *
 * kafkajs can leave a member in such a state after its coordinator was frozen and thawed: a rejoin
 * answered "the coordinator is loading" is not retried as a join, and the member then fetches
 * nothing and only sees its offset commits refused ("not the correct coordinator"), with no
 * further join, for minutes (docs/local-kafka.md, "When the group coordinator dies"). A new
 * kafkajs consumer looks the coordinator up and joins afresh.
 */
export class MemberWatchdog {
  #lastSign = Date.now();
  #restarting = false;
  readonly #timer: NodeJS.Timeout;

  constructor(stallMs: number, restart: () => Promise<void>, logger: Logger) {
    this.#timer = setInterval(
      () => {
        const silentMs = Date.now() - this.#lastSign;
        if (this.#restarting || silentMs < stallMs) return;
        this.#restarting = true;
        logger.warn({ silentMs }, 'consumer group member silent: restarting it');
        restart()
          .catch((err: unknown) => logger.warn({ err }, 'restarting a silent member failed; trying again'))
          .finally(() => {
            // A failed restart is tried again after another stallMs of silence.
            this.alive();
            this.#restarting = false;
          });
      },
      Math.max(250, Math.floor(stallMs / 4)),
    );
  }

  /** Listens to a (new) consumer's signs of life. */
  watch(consumer: Consumer): void {
    const alive = () => this.alive();
    consumer.on(consumer.events.HEARTBEAT, alive);
    consumer.on(consumer.events.GROUP_JOIN, alive);
    consumer.on(consumer.events.END_BATCH_PROCESS, alive);
    this.alive();
  }

  alive(): void {
    this.#lastSign = Date.now();
  }

  close(): void {
    clearInterval(this.#timer);
  }
}
