import { describe, expect, it } from 'vitest';
import { hasBearerToken, unauthorized } from '../src/bearerAuth.ts';

const TOKEN = 'admin-token-0123456789';

describe('hasBearerToken', () => {
  it('accepts exactly "Bearer <token>"', () => {
    expect(hasBearerToken(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
  });

  it('refuses a missing header, another scheme, a wrong token of the same length, a prefix or a longer one', () => {
    const sameLength = `${TOKEN.slice(0, -1)}X`;
    for (const header of [
      undefined,
      '',
      TOKEN,
      `Basic ${TOKEN}`,
      `Bearer ${sameLength}`,
      `Bearer ${TOKEN.slice(0, 5)}`,
      `Bearer ${TOKEN}0`,
    ]) {
      expect(hasBearerToken(header, TOKEN), String(header)).toBe(false);
    }
  });
});

describe('unauthorized', () => {
  it('is a 401 naming the setting that holds the token', () => {
    const problem = unauthorized('RELAY_ADMIN_TOKEN');
    expect(problem.status).toBe(401);
    expect(problem.title).toBe('Unauthorized');
    expect(problem.message).toBe('Send Authorization: Bearer <RELAY_ADMIN_TOKEN>.');
  });
});
