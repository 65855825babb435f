import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { HttpProblem } from './problem.ts';

/**
 * Every admin action of the console (redrive, the demo's stop/kill/start) needs
 * `Authorization: Bearer <CONSOLE_ADMIN_TOKEN>`. Compared in constant time, like the relay does.
 */
export function requireAdminToken(token: string): RequestHandler {
  const expected = Buffer.from(`Bearer ${token}`);
  return (req, _res, next) => {
    const given = Buffer.from(req.get('authorization') ?? '');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return next();
    next(new HttpProblem(401, 'Unauthorized', 'Send Authorization: Bearer <CONSOLE_ADMIN_TOKEN>.'));
  };
}
