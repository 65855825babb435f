import type { Consumer } from 'kafkajs';
import { toError } from '../../errors.ts';

/**
 * How long a member kafkajs stopped on its own may go without a crash report or a new join before
 * it counts as given up. kafkajs stops a crashed member, then reports the crash (with whether it
 * restarts it) once its disconnect has ended; a disconnect that throws never gets that far.
 */
const UNREPORTED_STOP_MS = 15_000;

/** Where a member stands, as kafkajs's own events tell it. */
export type MemberCondition =
  | { state: 'joining' }
  | { state: 'running' }
  /** Crashed, and kafkajs is restarting it: it rejoins by itself. */
  | { state: 'restarting'; reason: string }
  /** Crashed or stopped, and kafkajs will not restart it: only a new member consumes again. */
  | { state: 'given-up'; reason: string };

type LifeHooks = { onJoined(): void; onGivenUp(reason: string): void };

/**
 * One kafkajs consumer's life, read from its events: joined (running), crashed and being
 * restarted by kafkajs, or given up (a crash kafkajs does not restart, such as a non-retriable
 * protocol error, or a stop nobody asked for and no crash report after it). A member given up is
 * reported to `onGivenUp` once, each join to `onJoined`; a member kafkajs is restarting is left to kafkajs.
 */
export class MemberLife {
  #condition: MemberCondition = { state: 'joining' };
  #leaving = false;
  #stopTimer: NodeJS.Timeout | undefined;
  readonly #hooks: LifeHooks;

  constructor(consumer: Consumer, hooks: LifeHooks) {
    this.#hooks = hooks;
    consumer.on(consumer.events.GROUP_JOIN, () => {
      this.#set({ state: 'running' });
      hooks.onJoined();
    });
    consumer.on(consumer.events.STOP, () => {
      if (this.#leaving || this.#condition.state === 'given-up') return;
      this.#set({ state: 'restarting', reason: 'kafkajs stopped the group member' });
      this.#stopTimer = setTimeout(
        () => this.#giveUp('kafkajs stopped the group member and neither restarted it nor said why'),
        UNREPORTED_STOP_MS,
      );
      this.#stopTimer.unref();
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (this.#leaving) return;
      const error = toError(payload.error);
      const reason = `${error.name}: ${error.message}`;
      if (payload.restart)
        this.#set({ state: 'restarting', reason: `crashed, kafkajs restarts it: ${reason}` });
      else this.#giveUp(`crashed, and kafkajs does not restart it: ${reason}`);
    });
  }

  get condition(): MemberCondition {
    return this.#condition;
  }

  /** What keeps the member from consuming, if anything: for the health report. */
  problem(): string | undefined {
    const condition = this.#condition;
    if (condition.state === 'running') return undefined;
    if (condition.state === 'joining') return 'the group member has not joined the group yet';
    return `the group member is not running: ${condition.reason}`;
  }

  /** We stop it (shutdown or replacement): its stop and crash are not kafkajs's verdict. */
  leaving(): void {
    this.#leaving = true;
    clearTimeout(this.#stopTimer);
  }

  #giveUp(reason: string): void {
    if (this.#leaving || this.#condition.state === 'given-up') return;
    this.#set({ state: 'given-up', reason });
    this.#hooks.onGivenUp(reason);
  }

  #set(condition: MemberCondition): void {
    clearTimeout(this.#stopTimer);
    this.#stopTimer = undefined;
    this.#condition = condition;
  }
}
