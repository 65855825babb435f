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
  #wake: (() => void) | undefined;
  /** A notification that arrived while the relay was busy: the next sleep returns at once. */
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

  /** Resolve the pending `sleep`, if any. Also used to interrupt sleeping on shutdown. */
  wake(): void {
    if (this.#wake) this.#wake();
    else this.#notified = true;
  }

  /**
   * Forget the wake-ups received so far; the relay calls it right before each claim. What they
   * announced was committed before the claim starts, so the claim sees it: only a wake-up that
   * arrives after this may announce a row the claim missed.
   */
  reset(): void {
    this.#notified = false;
  }

  /** A wake-up arrived since the last reset or sleep: the next sleep returns at once. */
  get pending(): boolean {
    return this.#notified;
  }

  sleep(ms: number): Promise<void> {
    if (this.#notified) {
      this.#notified = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.#wake = undefined;
        resolve();
      }
      this.#wake = done;
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#reconnectTimer);
    this.wake();
    await this.#client?.end();
    this.#client = undefined;
  }
}
