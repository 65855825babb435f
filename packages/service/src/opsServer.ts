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
}): Promise<Server> {
  const server = createServer(async (req, res) => {
    try {
      if (await options.routes?.(req, res)) return;
    } catch {
      if (!res.headersSent) res.writeHead(500);
      res.end();
      return;
    }
    if (req.url === '/healthz') {
      const health = await options.health();
      res.writeHead(health.status === 'down' ? 503 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(health));
    } else if (req.url === '/metrics') {
      res.writeHead(200, { 'content-type': options.registry.contentType });
      res.end(await options.registry.metrics());
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '0.0.0.0', resolve);
  });
  return server;
}
