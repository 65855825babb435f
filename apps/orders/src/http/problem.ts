import type { ErrorRequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { z } from 'zod';

/** One offending field: a JSON Pointer into the request body and what is wrong with it. */
export type FieldError = { pointer: string; detail: string };

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

export function validationProblem(error: z.ZodError): HttpProblem {
  const errors = error.issues.flatMap(toFieldErrors);
  return new HttpProblem(
    400,
    'urn:problem:validation',
    'Invalid request body',
    `${errors.length} field(s) are invalid: ${errors.map((e) => e.pointer).join(', ')}`,
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
