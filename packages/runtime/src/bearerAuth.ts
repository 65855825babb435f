import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { HttpProblem } from './problem.ts';

/**
 * Whether an Authorization header is `Bearer <token>`. Compared in constant time, so how long the
 * answer takes does not tell a guesser how many leading characters they got right.
 */
export function hasBearerToken(authorization: string | undefined, token: string): boolean {
  const given = Buffer.from(authorization ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  // timingSafeEqual needs buffers of one length; a wrong length reveals only the token's length.
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The 401 for a request without the token; `variable` names the setting that holds the token. */
export function unauthorized(variable: string): HttpProblem {
  return new HttpProblem(401, 'Unauthorized', `Send Authorization: Bearer <${variable}>.`);
}

/** Let through only requests that carry `Authorization: Bearer <token>`; the rest get a 401. */
export function requireBearerToken(token: string, variable: string): RequestHandler {
  return (req, _res, next) => {
    if (hasBearerToken(req.get('authorization'), token)) return next();
    next(unauthorized(variable));
  };
}
