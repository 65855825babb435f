import { requireBearerToken } from '@outbox/runtime/bearer-auth';
import { HttpProblem } from '@outbox/runtime/problem';
import { Router } from 'express';
import { z } from 'zod';
import type { DatabasePairView } from './shared/apiTypes.ts';

/** What the console can do to a database's primary and standby (`./dev demo --failover`). */
export const FAILOVER_ACTIONS = ['pause', 'resume', 'kill', 'promote', 'rebuild'] as const;
export type FailoverAction = (typeof FAILOVER_ACTIONS)[number];

/**
 * Only the demo provides it, because only the demo owns the databases: `status` reads each
 * pair (and the cost of its last failover), `act` pauses or resumes the standby's WAL receipt,
 * kills the primary with kill -9, promotes the standby or builds a new one.
 */
export type DatabaseFailover = {
  status(): Promise<DatabasePairView[]>;
  act(database: string, action: FailoverAction): Promise<void>;
};

const params = z.object({
  database: z.enum(['orders', 'inventory', 'billing']),
  action: z.enum(FAILOVER_ACTIONS),
});

/**
 * `POST /api/demo/databases/:database/:action`, with the admin token. A refusal of the pair (a
 * promotion with the primary alive, a pause without a standby) answers 409 with its reason.
 */
export function databaseFailoverRouter(failover: DatabaseFailover, adminToken: string): Router {
  const router = Router();
  router.post(
    '/:database/:action',
    requireBearerToken(adminToken, 'CONSOLE_ADMIN_TOKEN'),
    async (req, res) => {
      const parsed = params.safeParse(req.params);
      if (!parsed.success) {
        throw new HttpProblem(
          400,
          'Invalid database action',
          `The database must be orders, inventory or billing, the action one of ${FAILOVER_ACTIONS.join(', ')}.`,
        );
      }
      try {
        await failover.act(parsed.data.database, parsed.data.action);
      } catch (err) {
        throw new HttpProblem(
          409,
          `Could not ${parsed.data.action}`,
          err instanceof Error ? err.message : String(err),
        );
      }
      res.json((await failover.status()).find((view) => view.database === parsed.data.database));
    },
  );
  return router;
}
