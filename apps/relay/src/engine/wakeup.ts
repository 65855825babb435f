import pg from 'pg';
import type { Logger } from 'pino';

/**
 * Sleeps until the outbox trigger's NOTIFY arrives or the poll interval passes, whichever is
 * first. NOTIFY gives low latency; the poll is the safety net (a notification sent while the
 * listening connection was down is lost, and the poll still finds the row).
 *
 * A wake-up means "something may be claimable that the last claim could not see": a NOTIFY, the
 * relay itself when a mark made an aggregate's next event its head, or stop(). One that arrives
 * while the relay is busy is kept, and the relay reads it to decide whether to claim again.
 */
export class Wakeup {
  readonly #databaseUrl: string;
  readonly #logger: Logger;
  #client: pg.Client | undefined;
  /** Whoever waits for the next wake-up: a sleep, or a publish racing one (wokenBefore). */
  readonly #waiters = new Set<() => void>();
  /** A wake-up arrived since the last reset or sleep: the next sleep returns at once. */
  #notified = false;
  #closed = false;
  #reconnectTimer: NodeJS.Timeout | undefined;

  constructor(databaseUrl: string, logger: Logger) {
    this.#databaseUrl = databaseUrl;
    this.#logger = logger;
  }

  /**
   * LISTEN on a connection of its own. Never throws: while the connection cannot be made or is
   * lost, it retries every second and the relay runs on its poll interval alone.
   */
  async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#databaseUrl });
    client.on('notification', () => this.wake());
    client.on('error', (err) => {
      this.#logger.warn({ err }, 'LISTEN connection lost; polling until it is back');
      this.#client = undefined;
      client.end().catch(() => {});
      this.#scheduleReconnect();
    });
    try {
      await client.connect();
      await client.query('listen outbox');
    } catch (err) {
      this.#logger.warn({ err }, 'cannot LISTEN yet; polling until it works');
      client.end().catch(() => {});
      this.#scheduleReconnect();
      return;
    }
    if (this.#closed) {
      await client.end();
      return;
    }
    this.#client = client;
    // Notifications sent while we were not listening are lost: look once right away.
    this.wake();
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#reconnectTimer) return;
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      void this.listen();
    }, 1000);
  }

  /** Ends the current sleep (or makes the next one return at once) and answers wokenBefore. */
  wake(): void {
    this.#notified = true;
    for (const waiter of this.#waiters) waiter();
  }

  /**
   * Forget the wake-ups received so far; the relay calls it right before each claim. What they
   * announced was committed before the claim starts, so the claim sees it: only a wake-up that
   * arrives after this may announce a row the claim missed.
   */
  reset(): void {
    this.#notified = false;
  }

  /** A wake-up arrived since the last reset or sleep: a sleep now would return at once. */
  get pending(): boolean {
    return this.#notified;
  }

  /**
   * Until the poll interval or a wake-up; at once if one arrived since the last reset or sleep.
   * Resolves true only when a wake-up ended a sleep that waited: the relay was idle (the relay's
   * linger waits after those alone).
   */
  sleep(ms: number): Promise<boolean> {
    if (this.#notified) {
      this.#notified = false;
      return Promise.resolve(false);
    }
    return new Promise((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timer);
        this.#waiters.delete(onWake);
        this.#notified = false;
        resolve(woken);
      };
      const onWake = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      this.#waiters.add(onWake);
    });
  }

  /**
   * True as soon as a wake-up arrives (at once if one already did since the last reset), false
   * if `work` settles first. Does not consume the wake-up.
   */
  async wokenBefore(work: Promise<unknown>): Promise<boolean> {
    if (this.#notified) return true;
    let woken = () => {};
    const wakeUp = new Promise<boolean>((resolve) => {
      woken = () => resolve(true);
    });
    this.#waiters.add(woken);
    try {
      return await Promise.race([
        wakeUp,
        work.then(
          () => false,
          () => false,
        ),
      ]);
    } finally {
      this.#waiters.delete(woken);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#reconnectTimer);
    this.wake();
    await this.#client?.end();
    this.#client = undefined;
  }
}
