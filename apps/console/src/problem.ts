import type { Logger } from '@outbox/service/logger';
import type { ErrorRequestHandler, Response } from 'express';

/** An error that becomes an RFC 9457 problem+json response, as in the orders API. */
export class HttpProblem extends Error {
  readonly status: number;
  readonly title: string;

  constructor(status: number, title: string, detail: string) {
    super(detail);
    this.status = status;
    this.title = title;
  }
}

export function sendProblem(res: Response, status: number, title: string, detail: string): void {
  res.status(status).type('application/problem+json').json({ type: 'about:blank', title, status, detail });
}

export function notFound(detail: string): HttpProblem {
  return new HttpProblem(404, 'Not found', detail);
}

/** HttpProblems as themselves, malformed JSON as 400, anything else as a logged 500. */
export function problemHandler(logger: Logger): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    if (err instanceof HttpProblem) return sendProblem(res, err.status, err.title, err.message);
    if ((err as { type?: string }).type === 'entity.parse.failed') {
      return sendProblem(res, 400, 'Malformed JSON', 'The request body is not valid JSON.');
    }
    logger.error({ err }, 'unhandled error');
    sendProblem(res, 500, 'Internal error', 'Something went wrong; it has been logged.');
  };
}
