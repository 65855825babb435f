import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { collectDefaultMetrics, type OpenMetricsContentType, Registry } from 'prom-client';

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
  collectDefaultMetrics({ register: registry });
  return registry;
}

export async function startOpsServer(options: {
  port: number;
  registry: MetricsRegistry;
  health: () => Health | Promise<Health>;
  /** Extra routes of the process (e.g. the relay's admin endpoint); resolves false when not its own. */
  routes?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
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
    server.listen(options.port, '0.0.0.0', resolve);
  });
  return server;
}
