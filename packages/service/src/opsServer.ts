import { createServer, type Server } from 'node:http';
import { collectDefaultMetrics, Registry } from 'prom-client';

export type Health = { status: 'ok' | 'degraded' | 'down'; [detail: string]: unknown };

/**
 * The operations endpoint of a worker process (relay, consumers): `GET /healthz` and `GET /metrics`.
 * HTTP apps mount the same handlers on their Express app instead (see apps/orders).
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

export async function startOpsServer(options: {
  port: number;
  registry: Registry;
  health: () => Health | Promise<Health>;
}): Promise<Server> {
  const server = createServer(async (req, res) => {
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
