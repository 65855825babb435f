import { createServer, type RequestListener, type Server } from 'node:http';
import { autovacuumWarning, SHOW_AUTOVACUUM } from '@outbox/runtime/database';
import type { MetricsRegistry } from '@outbox/runtime/ops-server';
import { notFound, problemHandler } from '@outbox/runtime/problem';
import express from 'express';
import type { Logger } from 'pino';
import { defaultAdmission, defaultOrderBatches } from './config.ts';
import type { Prisma } from './db.ts';
import { Admission, type AdmissionOptions, type BacklogReader } from './http/admission.ts';
import { answerClientErrors } from './http/clientErrors.ts';
import { frontDoor } from './http/frontDoor.ts';
import { httpMetrics, rememberMountPath } from './http/httpMetrics.ts';
import { jsonBody } from './http/jsonBody.ts';
import { type OrderPlacer, ordersRouter } from './http/ordersRouter.ts';
import { NOT_FOUND, ordersProblems } from './http/problem.ts';
import { OrderBatches, type OrderBatchOptions } from './orders/orderBatches.ts';

export type AppDeps = {
  prisma: Prisma;
  logger: Logger;
  registry: MetricsRegistry;
  /** The saga reply consumer's state and counters, reported on /healthz (as inventory and billing do). */
  replies?: () => object;
  /** The demo's and the chaos suite's writer (src/demo/); production's is outboxWriter. */
  writer?: OrderPlacer;
  /** The local demo's PUT /admin/write-mode (src/demo/); without it the route does not exist. */
  admin?: express.Router;
  /** How POST /orders groups concurrent orders into transactions (orders/orderBatches.ts). */
  orderBatches?: OrderBatchOptions;
  /** The admission limit in front of the routes' database work (config.ts: admissionOptions). */
  admission?: AdmissionOptions;
  /** The saga's backlog, which moves an adaptive admission limit (saga/sagaBacklog.ts). */
  sagaBacklog?: BacklogReader;
};

/** Production's writer: every order with its event, grouped into transactions under load. */
export function outboxWriter(batches: OrderBatches): OrderPlacer {
  return { mode: 'outbox', place: (request, key) => batches.place(request, key) };
}

/**
 * Build the HTTP app without listening, so tests can drive it on an ephemeral port: the Express
 * app behind its front door (http/frontDoor.ts), which refuses on arrival what the admission limit
 * would refuse anyway.
 */
export function createApp({
  prisma,
  logger,
  registry,
  replies,
  orderBatches = defaultOrderBatches,
  writer = outboxWriter(new OrderBatches(prisma, orderBatches)),
  admin,
  admission = defaultAdmission,
  sagaBacklog,
}: AppDeps): RequestListener {
  const app = express();
  app.disable('x-powered-by');
  const metrics = httpMetrics(registry);
  app.use(metrics.middleware);

  const admissionLimit = new Admission(admission, registry, sagaBacklog);
  app.use('/orders', rememberMountPath, ordersRouter(prisma, writer, admissionLimit));
  if (admin) app.use('/admin', jsonBody(), admin);

  // Up means the API can take orders: its database answers. The reply consumer is reported but does
  // not decide it: with Kafka away the API still takes orders (the outbox's point). Autovacuum off
  // is a warning, read once: a server setting that changes with a reload, not per request.
  let autovacuum: Promise<string | undefined> | undefined;
  app.get('/healthz', async (_req, res) => {
    await prisma.$queryRaw`select 1`;
    autovacuum ??= prisma.$queryRawUnsafe<{ autovacuum: string }[]>(SHOW_AUTOVACUUM).then(
      (rows) => autovacuumWarning(rows[0]?.autovacuum),
      () => {
        autovacuum = undefined;
        return undefined;
      },
    );
    const warning = await autovacuum;
    res.json({
      status: 'ok',
      writeMode: writer.mode,
      ...(replies ? { replies: replies() } : {}),
      ...(warning ? { warnings: [warning] } : {}),
    });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });

  app.use((req, _res, next) =>
    next(notFound(`No route for ${req.method} ${req.path}.`, { type: NOT_FOUND })),
  );
  app.use(problemHandler(logger, ordersProblems(logger, admission.retryAfterSeconds)));
  return frontDoor(app, admissionLimit, metrics, admission.retryAfterSeconds);
}

/** Serve `app` on host:port, answering malformed HTTP as problem+json too; resolves once listening. */
export function listen(app: RequestListener, port: number, host: string): Promise<Server> {
  const server = createServer(app);
  answerClientErrors(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
