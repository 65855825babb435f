import pg from 'pg';
import type { Logger } from 'pino';
import type { Wakeup } from '../engine/wakeup.ts';

/**
 * LISTEN outbox on a connection of its own, and wake the relay on each NOTIFY the outbox trigger
 * sends. Never throws: while the connection cannot be made or is lost, it retries every second
 * and the relay runs on its poll interval alone (engine/wakeup.ts).
 */
export class NotifyListener {
  readonly #databaseUrl: string;
  readonly #wakeup: Wakeup;
  readonly #logger: Logger;
  #client: pg.Client | undefined;
  #closed = false;
  #reconnectTimer: NodeJS.Timeout | undefined;

  constructor(databaseUrl: string, wakeup: Wakeup, logger: Logger) {
    this.#databaseUrl = databaseUrl;
    this.#wakeup = wakeup;
    this.#logger = logger;
  }

  async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#databaseUrl });
    client.on('notification', () => this.#wakeup.wake());
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
    this.#wakeup.wake();
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#reconnectTimer) return;
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      void this.listen();
    }, 1000);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#reconnectTimer);
    this.#wakeup.wake();
    await this.#client?.end();
    this.#client = undefined;
  }
}
