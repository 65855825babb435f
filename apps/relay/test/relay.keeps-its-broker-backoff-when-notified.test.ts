// While the broker is down the relay backs off between attempts. A NOTIFY (a new row) says
// nothing about the broker: it must not end the backoff, or every committed order would make the
// relay hit the dead broker again at once. New rows wait for the broker like the others.
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@outbox/devstack/ports';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { insertEvents } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InProcessRelay, startInProcessRelay } from './inProcessRelay.ts';

useLeakGuard();

/** What the relay logged when it backed off: when, and for how long. */
type Backoff = { time: number; retryInMs: number };
const backoffs: Backoff[] = [];
/** When each publish attempt started. */
const attempts: number[] = [];
let setup: InProcessRelay;

beforeAll(async () => {
  const logger = pino(
    { level: 'warn' },
    {
      write: (line: string) => {
        const entry = JSON.parse(line) as { msg?: string; time: number; retryInMs?: number };
        if (entry.msg === 'relay step failed; backing off' && entry.retryInMs !== undefined)
          backoffs.push({ time: entry.time, retryInMs: entry.retryInMs });
      },
    },
  );
  // Nothing listens on this port: every publish fails as "broker unavailable".
  setup = await startInProcessRelay('relay_backoff_notify', [`127.0.0.1:${await freePort()}`], {
    logger,
    pollIntervalMs: 60_000, // only a wake-up or the end of a backoff makes the relay claim
  });
  setup.around.before = async () => {
    attempts.push(Date.now());
  };
});

afterAll(async () => {
  await setup?.dispose();
});

describe('a relay backing off from a broker that is down', () => {
  it('waits out each backoff however many NOTIFYs arrive meanwhile', { timeout: 180_000 }, async () => {
    await setup.listener.listen();
    setup.relay.start();
    let inserting = true;
    // Each a new aggregate, so each is claimable at once (not queued behind a given-back head).
    const inserter = (async () => {
      for (let n = 0; inserting; n++, await sleep(20))
        await insertEvents(setup.db.url, { count: 1, aggregates: 1, aggregateIdPrefix: `order-${n}-` });
    })();
    // Backoffs double (with jitter) until one lasts seconds, far longer than a claim takes even on
    // a busy machine: then a NOTIFY that cut it short could not go unseen.
    const attemptAfter = (backoff: Backoff) => attempts.find((time) => time > backoff.time);
    try {
      await eventually(
        'an attempt after a backoff of 3 s or more',
        async () => backoffs.some((b) => b.retryInMs >= 3000 && attemptAfter(b)) || undefined,
        150_000,
      );
    } finally {
      inserting = false;
      await inserter;
    }

    // Each attempt after a backoff started no earlier than the backoff's end.
    const waited = backoffs
      .filter((backoff) => attemptAfter(backoff) !== undefined)
      .map((backoff) => ({
        backoffMs: backoff.retryInMs,
        waitedMs: (attemptAfter(backoff) ?? 0) - backoff.time,
      }));
    for (const { backoffMs, waitedMs } of waited)
      expect(waitedMs, JSON.stringify(waited)).toBeGreaterThanOrEqual(backoffMs - 5);
  });
});
