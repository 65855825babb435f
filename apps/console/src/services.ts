import type { Logger } from '@outbox/runtime/logger';
import pg from 'pg';
import { type Config, SERVICE_NAMES, type ServiceName } from './config.ts';

/** What the console reads of one service: its database, its process, and its database's relay. */
export type Service = {
  name: ServiceName;
  /** A small pool: the console runs a handful of read queries a second. */
  pool: pg.Pool;
  /** The process's base URL (for /healthz and /metrics). */
  url: string;
  relayUrl: string;
};

export function connectServices(config: Config, logger: Logger): Service[] {
  const settings: Record<ServiceName, { database: string; url: string; relayUrl: string }> = {
    orders: {
      database: config.ORDERS_DATABASE_URL,
      url: config.ORDERS_URL,
      relayUrl: config.RELAY_ORDERS_URL,
    },
    inventory: {
      database: config.INVENTORY_DATABASE_URL,
      url: config.INVENTORY_URL,
      relayUrl: config.RELAY_INVENTORY_URL,
    },
    billing: {
      database: config.BILLING_DATABASE_URL,
      url: config.BILLING_URL,
      relayUrl: config.RELAY_BILLING_URL,
    },
  };
  return SERVICE_NAMES.map((name) => {
    const { database, url, relayUrl } = settings[name];
    // A read that a stuck or black-holed database never answers fails within seconds (the server's
    // statement_timeout, and the client's own for a server that says nothing), so the console's
    // page shows the service as unreachable instead of hanging.
    const pool = new pg.Pool({
      connectionString: database,
      max: 2,
      connectionTimeoutMillis: 2000,
      statement_timeout: 5000,
      query_timeout: 6000,
    });
    // An idle connection the server dropped must not crash the console; the next query reconnects.
    pool.on('error', (err) => logger.warn({ err, service: name }, 'idle database connection lost'));
    return { name, pool, url, relayUrl };
  });
}

/** GET a JSON or text resource of another process, giving up after `timeoutMs`. */
export async function fetchWithTimeout(
  url: string,
  init: RequestInit = {},
  timeoutMs = 1500,
): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) {
    // fetch failures hide the useful part ("connect ECONNREFUSED 127.0.0.1:3002") in `cause`.
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return `${err.message}${cause}`;
  }
  return String(err);
}

export function serviceNamed(services: Service[], name: ServiceName): Service {
  const found = services.find((service) => service.name === name);
  if (!found) throw new Error(`no service named ${name}`);
  return found;
}
