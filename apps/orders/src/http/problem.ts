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
function toPointer(path: readonly PropertyKey[]): string {
  return `#${path
    .map((segment) => `/${encodeURIComponent(String(segment).replaceAll('~', '~0').replaceAll('/', '~1'))}`)
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

/** body-parser's own failures (malformed JSON, body too large) as problems, everything else as 500. */
export function problemHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (err instanceof HttpProblem) return sendProblem(res, err, req.originalUrl);
    if (isDatabaseUnavailable(err)) {
      logger.warn({ err }, 'database unavailable');
      res.set('Retry-After', String(RETRY_AFTER_SECONDS));
      return sendProblem(res, databaseUnavailableProblem(), req.originalUrl);
    }
    const type = (err as { type?: string }).type;
    if (type === 'entity.parse.failed') {
      return sendProblem(
        res,
        new HttpProblem(
          400,
          'urn:problem:malformed-json',
          'Malformed JSON',
          'The request body is not valid JSON.',
        ),
        req.originalUrl,
      );
    }
    if (type === 'entity.too.large') {
      return sendProblem(
        res,
        new HttpProblem(413, 'urn:problem:body-too-large', 'Request body too large', (err as Error).message),
        req.originalUrl,
      );
    }
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
