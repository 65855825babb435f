import { WRITE_MODES } from '@outbox/contracts';
import { requireBearerToken } from '@outbox/runtime/bearer-auth';
import { Router } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { validationProblem } from '../http/problem.ts';
import type { OrderWriter } from './orderWriter.ts';

const writeModeRequest = z.strictObject({ mode: z.enum(WRITE_MODES) });

/**
 * `PUT /admin/write-mode` with `Authorization: Bearer <ORDERS_ADMIN_TOKEN>` and `{"mode": "..."}`:
 * the local demo's switch between the outbox and the naive dual writes (orderWriter.ts).
 * Mounted only with WRITE_MODES_SWITCHABLE=true, which production refuses (demo/index.ts); the
 * mode lives in the process, so a restarted orders process is back in its configured WRITE_MODE.
 */
export function writeModeRouter(writer: OrderWriter, token: string, logger: Logger): Router {
  const router = Router();
  router.put('/write-mode', requireBearerToken(token, 'ORDERS_ADMIN_TOKEN'), (req, res) => {
    const parsed = writeModeRequest.safeParse(req.body);
    if (!parsed.success) throw validationProblem(parsed.error);
    const from = writer.mode;
    writer.mode = parsed.data.mode;
    logger.warn({ from, to: writer.mode }, 'write mode switched');
    res.json({ mode: writer.mode });
  });
  return router;
}
