// The relay claims again only after a wake-up (a NOTIFY, its own mark that unblocked an
// aggregate, stop()) or the poll interval (relay.ts #loop). These are the rules it relies on.

import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Wakeup } from '../src/engine/wakeup.ts';

const wakeup = () => new Wakeup();
const elapsed = async (work: Promise<unknown>) => {
  const start = performance.now();
  await work;
  return performance.now() - start;
};

describe('the relay wake-up', () => {
  it('keeps a wake-up that came while the relay was busy: the next sleep returns at once', async () => {
    const w = wakeup();
    w.wake();
    expect(await elapsed(w.sleep(5_000))).toBeLessThan(100);
    // Consumed: the sleep after it waits the interval.
    expect(await elapsed(w.sleep(150))).toBeGreaterThanOrEqual(140);
  });

  it('forgets wake-ups received before a claim (reset): the claim sees what they announced', async () => {
    const w = wakeup();
    w.wake();
    w.reset();
    expect(await elapsed(w.sleep(150))).toBeGreaterThanOrEqual(140);
  });

  it('ends a sleep when a wake-up arrives', async () => {
    const w = wakeup();
    setTimeout(() => w.wake(), 50);
    expect(await elapsed(w.sleep(5_000))).toBeLessThan(1_000);
  });

  it('says a sleep was ended by a wake-up only when it waited for one (the relay lingers after those)', async () => {
    const w = wakeup();
    setTimeout(() => w.wake(), 50);
    expect(await w.sleep(5_000)).toBe(true);
    expect(await w.sleep(50)).toBe(false); // the poll interval passed
    w.wake();
    expect(await w.sleep(5_000)).toBe(false); // came while the relay was busy: it was not idle
  });

  it('says whether a wake-up arrived before a publish settled, without consuming it', async () => {
    const w = wakeup();
    const slow = sleep(300);
    setTimeout(() => w.wake(), 50);
    expect(await w.wokenBefore(slow)).toBe(true);
    expect(await elapsed(w.sleep(5_000))).toBeLessThan(100); // still there for the next sleep

    const fast = Promise.resolve();
    expect(await w.wokenBefore(fast)).toBe(false);
    expect(await w.wokenBefore(Promise.reject(new Error('publish failed')))).toBe(false);
  });

  it('answers at once when a wake-up is already pending', async () => {
    const w = wakeup();
    w.wake();
    expect(await w.wokenBefore(new Promise(() => {}))).toBe(true);
  });
});
