import { hasBearerToken, requireBearerToken, unauthorized } from '@outbox/runtime/bearer-auth';
import { notFound, problemHandler } from '@outbox/runtime/problem';
import express from 'express';
import type { ConsoleDeps } from './consoleDeps.ts';
import { demoControlsRouter } from './demoControlRoutes.ts';
import { requireOwnHost } from './hostCheck.ts';
import { ordersRouter } from './ordersRoutes.ts';
import { redriveRouter } from './redriveRouter.ts';
import { runbookHandler } from './runbooks.ts';
import { staticFiles } from './staticFiles.ts';
import { systemRouter } from './systemRoutes.ts';

export type { ConsoleDeps } from './consoleDeps.ts';

/** Bodies the console accepts are tiny (an order, a redrive); anything bigger is a mistake. */
const BODY_LIMIT = '32kb';

/**
 * What the console shows is customers' orders and the system's insides: with CONSOLE_READ_TOKEN set,
 * every /api request needs it or the admin token (the admin routes then ask for the admin token).
 * The page, its runbooks and /healthz hold no data and stay open.
 */
function requireOneOfTokens(readToken: string, adminToken: string | undefined): express.RequestHandler {
  return (req, _res, next) => {
    const authorization = req.get('authorization');
    const admin = adminToken !== undefined && hasBearerToken(authorization, adminToken);
    if (admin || hasBearerToken(authorization, readToken)) return next();
    next(unauthorized('CONSOLE_READ_TOKEN'));
  };
}

/** Build the console's HTTP app without listening, so tests can drive it on an ephemeral port. */
export function createConsoleApp(deps: ConsoleDeps): express.Express {
  const { config, services, logger, controls } = deps;
  const adminToken = config.CONSOLE_ADMIN_TOKEN;
  const app = express();
  app.disable('x-powered-by');
  app.use(requireOwnHost(config.CONSOLE_HOSTS));
  app.use(express.json({ limit: BODY_LIMIT }));

  // For a container's healthcheck: the console process answers. (What it shows is the others' health.)
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  if (config.CONSOLE_READ_TOKEN !== undefined) {
    app.use('/api', requireOneOfTokens(config.CONSOLE_READ_TOKEN, adminToken));
  }
  app.use('/api', ordersRouter(deps), systemRouter(deps));
  // Admin actions exist only with a token to protect them.
  if (adminToken !== undefined && config.RELAY_ADMIN_TOKEN !== undefined) {
    app.use(
      '/api/admin',
      requireBearerToken(adminToken, 'CONSOLE_ADMIN_TOKEN'),
      redriveRouter(services, config.RELAY_ADMIN_TOKEN),
    );
  }
  if (adminToken !== undefined && controls !== undefined) {
    app.use('/api/demo', demoControlsRouter(controls, adminToken));
  }

  app.use('/api', (req, _res, next) => next(notFound(`No route for ${req.method} /api${req.path}.`)));
  app.get('/runbooks/:anchor', runbookHandler());
  app.use(staticFiles());
  app.use((req, _res, next) => next(notFound(`No page at ${req.path}.`)));
  app.use(problemHandler(logger));
  return app;
}
