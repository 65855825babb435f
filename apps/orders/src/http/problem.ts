import type { ErrorRequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { z } from 'zod';
import {
  databaseUnavailableProblem,
  isDatabaseUnavailable,
  RETRY_AFTER_SECONDS,
} from './databaseUnavailable.ts';

/**
 * One offending input and what is wrong with it: a JSON Pointer into the body, or the name of a
 * query parameter or header (the members RFC 9457's examples use).
 */
export type FieldError = { pointer?: string; parameter?: string; header?: string; detail: string };

/**
 * An error that becomes an RFC 9457 problem+json response. `type` is a stable, documented
 * identifier clients can switch on; `errors` lists the offending fields.
 */
export class HttpProblem extends Error {
  readonly status: number;
  readonly type: string;
  readonly title: string;
  readonly errors: FieldError[] | undefined;

  constructor(status: number, type: string, title: string, detail: string, errors?: FieldError[]) {
    super(detail);
    this.status = status;
    this.type = type;
    this.title = title;
    this.errors = errors;
  }
}

/** A zod failure of the body (errors point into it) or of the query string (errors name the parameter). */
export function validationProblem(error: z.ZodError, source: 'body' | 'query' = 'body'): HttpProblem {
  const errors = error.issues.flatMap(source === 'body' ? toFieldErrors : toParameterErrors);
  const where = errors.map((e) => e.pointer ?? e.parameter).join(', ');
  return new HttpProblem(
    400,
    'urn:problem:validation',
    source === 'body' ? 'Invalid request body' : 'Invalid query parameters',
    `${errors.length} field(s) are invalid: ${where}`,
    errors,
  );
}

function toFieldErrors(issue: z.core.$ZodIssue): FieldError[] {
  // An unexpected key is reported on its parent object; point at each key itself.
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ pointer: toPointer([...issue.path, key]), detail: 'unknown field' }));
  }
  return [{ pointer: toPointer(issue.path), detail: issue.message }];
}

function toParameterErrors(issue: z.core.$ZodIssue): FieldError[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ parameter: key, detail: 'unknown query parameter' }));
  }
  return [{ parameter: String(issue.path[0]), detail: issue.message }];
}

/**
 * A JSON Pointer (RFC 6901) in URI fragment form: `#` is the whole body, each segment is escaped
 * (`~` as `~0`, `/` as `~1`) and then percent-encoded, so any key yields a valid, unambiguous pointer.
 */
export function toPointer(path: readonly PropertyKey[]): string {
  // toWellFormed: encodeURIComponent throws on a lone surrogate, and a client may send one in a key.
  return `#${path
    .map(
      (segment) =>
        `/${encodeURIComponent(String(segment).toWellFormed().replaceAll('~', '~0').replaceAll('/', '~1'))}`,
    )
    .join('')}`;
}

export function sendProblem(res: Response, problem: HttpProblem, instance: string): void {
  res
    .status(problem.status)
    .type('application/problem+json')
    .json({
      type: problem.type,
      title: problem.title,
      status: problem.status,
      detail: problem.message,
      instance,
      ...(problem.errors ? { errors: problem.errors } : {}),
    });
}

/** The `type` of jsonBody.ts's error for a body whose bytes are not UTF-8. */
export const INVALID_UTF8 = 'entity.invalid-utf8';

/**
 * Client errors the HTTP stack raises before our handlers run (body-parser, the router's
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
  [INVALID_UTF8]: { status: 400, type: 'urn:problem:validation', title: 'Body is not valid UTF-8' },
};

/** A client error raised by the HTTP stack, as a problem; undefined when `err` is not one. */
export function stackProblem(err: unknown): HttpProblem | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { type, status, message, errors } = err as {
    type?: unknown;
    status?: unknown;
    message?: unknown;
    errors?: FieldError[];
  };
  const detail = typeof message === 'string' && message ? message : 'The request cannot be read.';
  const known = typeof type === 'string' ? STACK_PROBLEMS[type] : undefined;
  if (known) return new HttpProblem(known.status, known.type, known.title, detail, errors);
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new HttpProblem(status, 'urn:problem:bad-request', 'Bad request', detail);
  }
  return undefined;
}

/** Problems as problem+json; a database that is away as 503; everything else as a logged 500. */
export function problemHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (err instanceof HttpProblem) return sendProblem(res, err, req.originalUrl);
    if (isDatabaseUnavailable(err)) {
      logger.warn({ err }, 'database unavailable');
      res.set('Retry-After', String(RETRY_AFTER_SECONDS));
      return sendProblem(res, databaseUnavailableProblem(), req.originalUrl);
    }
    const problem = stackProblem(err);
    if (problem) return sendProblem(res, problem, req.originalUrl);
    logger.error({ err }, 'unhandled error');
    sendProblem(
      res,
      new HttpProblem(
        500,
        'urn:problem:internal',
        'Internal error',
        'Something went wrong; it has been logged.',
      ),
      req.originalUrl,
    );
  };
}
