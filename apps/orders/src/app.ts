import type { MetricsRegistry } from '@outbox/service/ops-server';
import express from 'express';
import type { Logger } from 'pino';
import type { Prisma } from './db.ts';
import { httpMetrics } from './http/httpMetrics.ts';
import { ordersRouter } from './http/ordersRouter.ts';
import { HttpProblem, problemHandler } from './http/problem.ts';

export type AppDeps = { prisma: Prisma; logger: Logger; registry: MetricsRegistry };

/** Orders bodies are small; anything bigger is a mistake or an attack. */
const BODY_LIMIT = '32kb';

/** Build the HTTP app without listening, so tests can drive it on an ephemeral port. */
export function createApp({ prisma, logger, registry }: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(httpMetrics(registry));
  app.use(express.json({ limit: BODY_LIMIT }));

  app.use('/orders', ordersRouter(prisma));

  app.get('/healthz', async (_req, res) => {
    await prisma.$queryRaw`select 1`;
    res.json({ status: 'ok' });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });

  app.use((req, _res, next) =>
    next(
      new HttpProblem(404, 'urn:problem:not-found', 'Not found', `No route for ${req.method} ${req.path}.`),
    ),
  );
  app.use(problemHandler(logger));
  return app;
}
