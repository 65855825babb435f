import type { ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Response } from 'express';
import type { Logger } from './logger.ts';

/**
 * HTTP errors as RFC 9457 problem+json, the one module every app answers them with: the orders
 * API, the console and the relay's admin routes. Which of an app's own errors becomes which
 * problem stays in that app's HTTP edge; this module only knows how a problem looks on the wire.
 */

/** RFC 9457's media type; every error answer of every app carries it. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * One offending input and what is wrong with it: a JSON Pointer into the body, or the name of a
 * query parameter or header (the members RFC 9457's examples use).
 */
export type FieldError = { pointer?: string; parameter?: string; header?: string; detail: string };

/** A problem+json body as the apps send it; `instance` is the path of the request it answers. */
export type ProblemBody = {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: FieldError[];
};

export type ProblemOptions = {
  /** A stable identifier clients can switch on; RFC 9457's `about:blank` when the status says it all. */
  type?: string;
  errors?: FieldError[];
  /** Response headers that belong to this answer (Retry-After on a 503, say). */
  headers?: Record<string, string>;
};

/** An error that becomes a problem+json response; its message is the problem's `detail`. */
export class HttpProblem extends Error {
  readonly status: number;
  readonly type: string;
  readonly title: string;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;

  constructor(status: number, title: string, detail: string, options: ProblemOptions = {}) {
    super(detail);
    this.status = status;
    this.type = options.type ?? 'about:blank';
    this.title = title;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }
}

export function notFound(detail: string, options: ProblemOptions = {}): HttpProblem {
  return new HttpProblem(404, 'Not found', detail, options);
}

export function problemBody(problem: HttpProblem, instance?: string): ProblemBody {
  return {
    type: problem.type,
    title: problem.title,
    status: problem.status,
    detail: problem.message,
    ...(instance === undefined ? {} : { instance }),
    ...(problem.errors ? { errors: problem.errors } : {}),
  };
}

/** Answer with `problem` through Express. */
export function sendProblem(res: Response, problem: HttpProblem, instance?: string): void {
  res
    .status(problem.status)
    .set(problem.headers)
    .type(PROBLEM_CONTENT_TYPE)
    .json(problemBody(problem, instance));
}

/** Answer with `problem` on a plain node:http response (the relay's ops server has no Express). */
export function writeProblem(res: ServerResponse, problem: HttpProblem, instance?: string): void {
  res.writeHead(problem.status, { ...problem.headers, 'content-type': PROBLEM_CONTENT_TYPE });
  res.end(JSON.stringify(problemBody(problem, instance)));
}

/**
 * Client errors the HTTP stack raises before an app's handlers run (body-parser, the router's
 * percent-decoding), by their `type`: each becomes a 4xx problem of its own kind. An error not in
 * this table but carrying a 4xx `status` (http-errors sets one on every client error) still gets a
 * 4xx, as a generic bad request, never a 500.
 */
const STACK_PROBLEMS: Record<string, { status: number; type: string; title: string }> = {
  'entity.parse.failed': { status: 400, type: 'urn:problem:malformed-json', title: 'Malformed JSON' },
  'entity.too.large': { status: 413, type: 'urn:problem:body-too-large', title: 'Request body too large' },
  'parameters.too.many': { status: 413, type: 'urn:problem:body-too-large', title: 'Request body too large' },
  'charset.unsupported': {
    status: 415,
    type: 'urn:problem:unsupported-charset',
    title: 'Unsupported charset',
  },
  'encoding.unsupported': {
    status: 415,
    type: 'urn:problem:unsupported-content-encoding',
    title: 'Unsupported content encoding',
  },
  'request.size.invalid': {
    status: 400,
    type: 'urn:problem:bad-request',
    title: 'Body length does not match Content-Length',
  },
  'request.aborted': { status: 400, type: 'urn:problem:bad-request', title: 'Request aborted' },
};

/** A client error raised by the HTTP stack, as a problem; undefined when `err` is not one. */
export function stackProblem(err: unknown): HttpProblem | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { type, status, message } = err as { type?: unknown; status?: unknown; message?: unknown };
  const detail = typeof message === 'string' && message ? message : 'The request cannot be read.';
  const known = typeof type === 'string' ? STACK_PROBLEMS[type] : undefined;
  if (known) return new HttpProblem(known.status, known.title, detail, { type: known.type });
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new HttpProblem(status, 'Bad request', detail, { type: 'urn:problem:bad-request' });
  }
  return undefined;
}

/** An app's own errors, as the problems it answers them with; undefined for an error it does not know. */
export type ProblemMapper = (err: unknown) => HttpProblem | undefined;

/**
 * Express's last error handler, for every app. An `HttpProblem` is answered as itself; an error
 * the app maps (`toProblem`: the orders API's unreachable database, say) as its problem; a client
 * error of the HTTP stack (`stackProblem`) as its 4xx. Anything else is a bug: it is logged with
 * its stack and answered 500 without its message, which may tell a client about our internals.
 * Every answer is problem+json whose `instance` is the request's URL.
 */
export function problemHandler(
  logger: Logger,
  toProblem: ProblemMapper = () => undefined,
): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const problem = err instanceof HttpProblem ? err : (toProblem(err) ?? stackProblem(err));
    if (problem) return sendProblem(res, problem, req.originalUrl);
    logger.error({ err }, 'unhandled error');
    sendProblem(
      res,
      new HttpProblem(500, 'Internal error', 'Something went wrong; it has been logged.', {
        type: 'urn:problem:internal',
      }),
      req.originalUrl,
    );
  };
}
