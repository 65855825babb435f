import { HttpProblem } from '@outbox/runtime/problem';
import { Router } from 'express';
import { z } from 'zod';
import { SERVICE_NAMES } from './config.ts';
import { errorMessage, fetchWithTimeout, type Service } from './services.ts';

const redriveBody = z.strictObject({ service: z.enum(SERVICE_NAMES), id: z.uuid() });

/**
 * `POST /api/admin/redrive {"service": "orders", "id": "<event id>"}`: put one dead-lettered event
 * back in line. The console does not touch the outbox itself: it asks the relay of that database
 * (`POST /admin/redrive`, apps/relay/src/polling/adminRoutes.ts), the one place that redrives and logs it.
 */
export function redriveRouter(services: Service[], relayAdminToken: string): Router {
  const router = Router();
  router.post('/redrive', async (req, res) => {
    const body = redriveBody.safeParse(req.body);
    if (!body.success) {
      throw new HttpProblem(
        400,
        'Invalid redrive request',
        `Send {"service": "${SERVICE_NAMES.join('" | "')}", "id": "<event uuid>"}.`,
      );
    }
    const service = services.find((s) => s.name === body.data.service);
    if (!service)
      throw new HttpProblem(400, 'Invalid redrive request', `Unknown service ${body.data.service}.`);
    let answer: Response;
    try {
      answer = await fetchWithTimeout(`${service.relayUrl}/admin/redrive`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${relayAdminToken}` },
        body: JSON.stringify({ id: body.data.id }),
      });
    } catch (err) {
      throw new HttpProblem(502, 'Relay unreachable', `relay-${service.name}: ${errorMessage(err)}`);
    }
    if (!answer.ok) {
      throw new HttpProblem(
        502,
        'Relay refused the redrive',
        `relay-${service.name} answered ${answer.status}.`,
      );
    }
    res.json(await answer.json());
  });
  return router;
}
