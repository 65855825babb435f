import { type FieldError, HttpProblem, type ProblemMapper } from '@outbox/runtime/problem';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { CommitOutcomeUnknown } from '../orders/commitOutcome.ts';
import { Overloaded } from './admission.ts';
import {
  commitOutcomeUnknownProblem,
  databaseTimeoutProblem,
  databaseUnavailableProblem,
  isDatabaseTimeout,
  isDatabaseUnavailable,
} from './databaseUnavailable.ts';
import { isPoolExhausted, overloadedProblem } from './overload.ts';

/**
 * The orders API's own errors as problems (problem+json itself is @outbox/runtime/problem's):
 * what the router refuses, and the database being away.
 */

/** The `type` of every 404 of the orders API: no such route, no such order. */
export const NOT_FOUND = 'urn:problem:not-found';

/** A zod failure of the body (errors point into it) or of the query string (errors name the parameter). */
export function validationProblem(error: z.ZodError, source: 'body' | 'query' = 'body'): HttpProblem {
  const errors = error.issues.flatMap(source === 'body' ? toFieldErrors : toParameterErrors);
  const where = errors.map((e) => e.pointer ?? e.parameter).join(', ');
  return new HttpProblem(
    400,
    source === 'body' ? 'Invalid request body' : 'Invalid query parameters',
    `${errors.length} field(s) are invalid: ${where}`,
    { type: 'urn:problem:validation', errors },
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

/**
 * What problemHandler cannot know by itself: a database that is away is a 503, not a 500; so is a
 * statement the server cancelled on a timeout (rolled back); so is an order whose commit may or may
 * not have happened, but that one says so; so is a request shed
 * under overload (refused by the admission limit, or finding no free pooled connection), which
 * says that and nothing else: the database is fine.
 */
export function ordersProblems(logger: Logger, retryAfterSeconds: number): ProblemMapper {
  return (err) => {
    if (err instanceof Overloaded) return overloadedProblem(err.retryAfterSeconds);
    if (isPoolExhausted(err)) {
      // Admitted, yet no pooled connection came free: something outside the limit held them.
      logger.warn({ err }, 'no pooled connection came free in time: answered 503 overloaded');
      return overloadedProblem(retryAfterSeconds);
    }
    if (err instanceof CommitOutcomeUnknown) {
      logger.error({ err, orderId: err.orderId }, 'commit outcome unknown');
      return commitOutcomeUnknownProblem(err.orderId);
    }
    if (isDatabaseTimeout(err)) {
      logger.warn({ err }, 'a statement timed out: answered 503, nothing written');
      return databaseTimeoutProblem();
    }
    if (!isDatabaseUnavailable(err)) return undefined;
    logger.warn({ err }, 'database unavailable');
    return databaseUnavailableProblem();
  };
}
