import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OutboxStore } from '@outbox/outbox';
import { hasBearerToken, unauthorized } from '@outbox/runtime/bearer-auth';
import { HttpProblem, writeProblem } from '@outbox/runtime/problem';
import type { Logger } from 'pino';
import { z } from 'zod';

/** What an operator may redrive: one event, every dead-lettered event of a type, or all of them. */
export const redriveRequest = z.union([
  z.strictObject({ id: z.uuid() }),
  z.strictObject({ eventType: z.string().min(1) }),
  z.strictObject({ all: z.literal(true) }),
]);

async function readBody(req: IncomingMessage, limit = 4096): Promise<string> {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > limit) throw new Error('body too large');
  }
  return body;
}

/** The redrive a request asks for; throws the problem that refuses it. */
async function redriveSelector(
  req: IncomingMessage,
  token: string,
): Promise<z.output<typeof redriveRequest>> {
  if (req.method !== 'POST') throw new HttpProblem(405, 'Method not allowed', 'Use POST.');
  if (!hasBearerToken(req.headers.authorization, token)) throw unauthorized('RELAY_ADMIN_TOKEN');
  let body: unknown;
  try {
    body = JSON.parse(await readBody(req));
  } catch {
    throw new HttpProblem(400, 'Malformed request', 'The body must be JSON of at most 4 KiB.');
  }
  const parsed = redriveRequest.safeParse(body);
  if (!parsed.success) {
    throw new HttpProblem(
      422,
      'Invalid redrive request',
      'Send {"id": "<uuid>"}, {"eventType": "<type>"} or {"all": true}.',
    );
  }
  return parsed.data;
}

/**
 * `POST /admin/redrive` with `Authorization: Bearer <RELAY_ADMIN_TOKEN>` and a JSON body
 * `{"id": "..."}`, `{"eventType": "ORDER_CREATED"}` or `{"all": true}`: re-queue dead-lettered
 * events. Answers `{ "redriven": [ids] }`, or a problem+json refusal. Returns false for requests
 * that are not its own.
 */
export function adminRoutes(store: Pick<OutboxStore, 'redrive'>, token: string, logger: Logger) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    if (req.url !== '/admin/redrive') return false;
    let selector: z.output<typeof redriveRequest>;
    try {
      selector = await redriveSelector(req, token);
    } catch (err) {
      if (!(err instanceof HttpProblem)) throw err;
      writeProblem(res, err, req.url);
      return true;
    }
    const redriven = await store.redrive(selector);
    logger.info({ selector, count: redriven.length }, 'dead-lettered events redriven');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ redriven }));
    return true;
  };
}
