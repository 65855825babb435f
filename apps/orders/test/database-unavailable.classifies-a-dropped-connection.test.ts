// A connection the server drops in the middle of a statement (PostgreSQL restarted in immediate
// mode) reaches the API as node-postgres' plain "Connection terminated unexpectedly" error: it is
// the database being away (503, retry), not a bug (500). The chaos scenario postgres-restart saw
// /healthz answer 500 for it under load.
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../src/http/databaseUnavailable.ts';

describe('database unavailable', () => {
  it('counts a connection the server dropped mid-statement', () => {
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated due to connection timeout'))).toBe(true);
  });

  it('counts the SQLSTATEs of a server going down, and nothing else', () => {
    expect(isDatabaseUnavailable(Object.assign(new Error('terminating'), { code: '57P01' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('unique'), { code: '23505' }))).toBe(false);
    expect(isDatabaseUnavailable(new Error('something else'))).toBe(false);
  });
});
