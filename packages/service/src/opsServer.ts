import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
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
