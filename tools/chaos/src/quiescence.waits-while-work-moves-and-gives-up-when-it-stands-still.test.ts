import { describe, expect, it } from 'vitest';
import { keepWaiting, STALL_MS } from './quiescence.ts';

const started = 1_000_000;
const timeoutMs = 90_000;
const deadline = started + timeoutMs;

describe('keepWaiting (the wait for quiet)', () => {
  it('waits until the deadline even when nothing moves', () => {
    expect(keepWaiting(deadline, { started, timeoutMs, movedAt: started })).toBe(true);
  });

  it('waits past the deadline while work still moves: a slow machine catching up', () => {
    const now = deadline + 30_000;
    expect(keepWaiting(now, { started, timeoutMs, movedAt: now - 1_000 })).toBe(true);
    expect(keepWaiting(now, { started, timeoutMs, movedAt: now - STALL_MS })).toBe(true);
  });

  it('gives up past the deadline once nothing has moved for STALL_MS: a stall still fails', () => {
    const now = deadline + 1;
    expect(keepWaiting(now, { started, timeoutMs, movedAt: now - STALL_MS - 1 })).toBe(false);
    // Nothing moved since the wait began: given up at the deadline, as without the rule.
    expect(keepWaiting(now, { started, timeoutMs, movedAt: started })).toBe(false);
  });

  it('gives up after two deadlines however much still moves', () => {
    const now = started + 2 * timeoutMs + 1;
    expect(keepWaiting(now, { started, timeoutMs, movedAt: now })).toBe(false);
  });

  it('outlasts a killed member’s 30 s session with room to spare', () => {
    expect(STALL_MS).toBeGreaterThanOrEqual(30_000 * 1.5);
  });
});
