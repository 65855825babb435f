import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { redrive } from '@outbox/events';
import type pg from 'pg';
import type { Logger } from 'pino';
import { z } from 'zod';

/** What an operator may redrive: one event, every dead-lettered event of a type, or all of them. */
export const redriveRequest = z.union([
  z.strictObject({ id: z.uuid() }),
  z.strictObject({ eventType: z.string().min(1) }),
  z.strictObject({ all: z.literal(true) }),
]);

function sendJson(res: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type });
  res.end(JSON.stringify(body));
}

function problem(res: ServerResponse, status: number, title: string, detail: string): void {
  sendJson(res, status, { type: 'about:blank', title, status, detail }, 'application/problem+json');
}

function authorized(req: IncomingMessage, token: string): boolean {
  const given = Buffer.from(req.headers.authorization ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function readBody(req: IncomingMessage, limit = 4096): Promise<string> {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > limit) throw new Error('body too large');
  }
  return body;
}

/**
 * `POST /admin/redrive` with `Authorization: Bearer <RELAY_ADMIN_TOKEN>` and a JSON body
 * `{"id": "..."}`, `{"eventType": "ORDER_CREATED"}` or `{"all": true}`: re-queue dead-lettered
 * events. Answers `{ "redriven": [ids] }`. Returns false for requests that are not its own.
 */
export function adminRoutes(pool: pg.Pool, token: string, logger: Logger) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    if (req.url !== '/admin/redrive') return false;
    if (req.method !== 'POST') {
      problem(res, 405, 'Method not allowed', 'Use POST.');
    } else if (!authorized(req, token)) {
      problem(res, 401, 'Unauthorized', 'Send Authorization: Bearer <RELAY_ADMIN_TOKEN>.');
    } else {
      let parsed: z.ZodSafeParseResult<z.output<typeof redriveRequest>>;
      try {
        parsed = redriveRequest.safeParse(JSON.parse(await readBody(req)));
      } catch {
        problem(res, 400, 'Malformed request', 'The body must be JSON of at most 4 KiB.');
        return true;
      }
      if (!parsed.success) {
        problem(
          res,
          422,
          'Invalid redrive request',
          'Send {"id": "<uuid>"}, {"eventType": "<type>"} or {"all": true}.',
        );
        return true;
      }
      const redriven = await redrive(pool, parsed.data);
      logger.info({ selector: parsed.data, count: redriven.length }, 'dead-lettered events redriven');
      sendJson(res, 200, { redriven });
    }
    return true;
  };
}
