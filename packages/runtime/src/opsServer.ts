import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { collectDefaultMetrics, type OpenMetricsContentType, Registry } from 'prom-client';
import { z } from 'zod';

export type Health = { status: 'ok' | 'degraded' | 'down'; [detail: string]: unknown };

/**
 * The operations endpoint of a worker process (relay, consumers): `GET /healthz` and `GET /metrics`.
 * HTTP apps mount the same handlers on their Express app instead (see apps/orders).
 */
/**
 * Every process exposes OpenMetrics, not the older Prometheus text format: only OpenMetrics carries
 * exemplars, the trace ids that link a latency graph to traces (./exemplars.ts). Prometheus asks
 * for it by default; the sample lines read the same (`*_total`, `*_bucket`).
 */
export type MetricsRegistry = Registry<OpenMetricsContentType>;

export function createMetricsRegistry(service: string): MetricsRegistry {
  const registry = new Registry<OpenMetricsContentType>();
  registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  registry.setDefaultLabels({ service });
  // prom-client samples event-loop delay with a libuv timer at this resolution: its default, 10 ms,
  // woke every idle process ~100 times a second (docs/performance.md). At 100 ms, a block of the
  // loop that long or longer is still measured in full.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
  return registry;
}

/**
 * `HOST`: where the ops server listens. Every interface by default, as a container needs for its
 * published port and Prometheus; the local demo sets 127.0.0.1 so nothing else on the network
 * reaches /metrics or the relay's admin endpoint.
 */
const hostSchema = z.union([z.ipv4(), z.ipv6(), z.literal('localhost')]).default('0.0.0.0');

export function opsHost(env: Record<string, string | undefined> = process.env): string {
  const parsed = hostSchema.safeParse(env.HOST || undefined);
  if (!parsed.success) throw new Error('HOST: expected an IP address or localhost (its value is not shown)');
  return parsed.data;
}

export async function startOpsServer(options: {
  port: number;
  registry: MetricsRegistry;
  health: () => Health | Promise<Health>;
  /** Extra routes of the process (e.g. the relay's admin endpoint); resolves false when not its own. */
  routes?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
  /** The address to listen on; see `opsHost`. */
  host?: string;
  /** Told about a request that failed; without it the failure is only answered, never logged. */
  onError?: (err: unknown, path: string) => void;
}): Promise<Server> {
  // An ops endpoint must never take its process down: a scrape or a health probe that fails is
  // answered with an error status (and reported), never left as an unhandled rejection, which
  // Node turns into an exit. Metrics that read a database catch their own failures (see the
  // relay's backlog gauges); this is the last line for anything else.
  const server = createServer((req, res) => {
    serve(req, res).catch((err: unknown) => {
      options.onError?.(err, req.url ?? '');
      if (!res.headersSent)
        res.writeHead(req.url === '/healthz' ? 503 : 500, { 'content-type': 'text/plain' });
      res.end(req.url === '/healthz' ? 'health check failed\n' : 'request failed\n');
    });
  });
  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (await options.routes?.(req, res)) return;
    if (req.url === '/healthz') {
      const health = await options.health();
      res.writeHead(health.status === 'down' ? 503 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(health));
    } else if (req.url === '/metrics') {
      const body = await options.registry.metrics();
      res.writeHead(200, { 'content-type': options.registry.contentType });
      res.end(body);
    } else {
      res.writeHead(404).end();
    }
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? opsHost(), resolve);
  });
  return server;
}
