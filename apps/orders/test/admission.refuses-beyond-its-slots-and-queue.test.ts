// The admission limit on its own (src/http/admission.ts): slots, a bounded queue served first come
// first served, and refusals for a full queue and for a wait that ran out. No database.
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import { describe, expect, it } from 'vitest';
import { Admission, type AdmissionOptions, Overloaded } from '../src/http/admission.ts';

const options = (more: Partial<AdmissionOptions>): AdmissionOptions => ({
  limit: 1,
  queueLength: 0,
  queueTimeoutMs: 0,
  retryAfterSeconds: 1,
  ...more,
});

/** A piece of work that runs until the test ends it. */
function heldWork() {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => {
    end = resolve;
  });
  let started!: () => void;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  return {
    work: async () => {
      started();
      await ended;
      return 'done';
    },
    running,
    end,
  };
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (err: unknown) => err,
  );

describe('Admission', () => {
  it('refuses at once, as queue_full, when every slot is taken and there is no queue', async () => {
    const admission = new Admission(options({ limit: 2 }));
    const first = heldWork();
    const second = heldWork();
    const running = [admission.run(first.work), admission.run(second.work)];
    expect(admission.inFlight).toBe(2);
    const refused = await refusal(admission.run(async () => 'never'));
    expect(refused).toBeInstanceOf(Overloaded);
    expect(refused).toMatchObject({ code: 'OVERLOADED', reason: 'queue_full', retryAfterSeconds: 1 });
    first.end();
    second.end();
    expect(await Promise.all(running)).toEqual(['done', 'done']);
    expect(admission.inFlight).toBe(0);
  });

  it('hands a freed slot to the longest waiter, and refuses beyond the queue', async () => {
    const admission = new Admission(options({ queueLength: 2, queueTimeoutMs: 60_000 }));
    const held = heldWork();
    const order: string[] = [];
    const running = admission.run(held.work);
    const waiting = ['a', 'b'].map((name) => admission.run(async () => order.push(name)));
    expect(admission.queued).toBe(2);
    expect(await refusal(admission.run(async () => 'never'))).toMatchObject({ reason: 'queue_full' });
    held.end();
    await Promise.all([running, ...waiting]);
    expect(order).toEqual(['a', 'b']);
    expect(admission.inFlight).toBe(0);
    expect(admission.queued).toBe(0);
  });

  it('refuses a waiter as queue_timeout when no slot comes free in time, and frees its place', async () => {
    const admission = new Admission(options({ queueLength: 1, queueTimeoutMs: 20 }));
    const held = heldWork();
    const running = admission.run(held.work);
    await held.running;
    expect(await refusal(admission.run(async () => 'never'))).toMatchObject({ reason: 'queue_timeout' });
    expect(admission.queued).toBe(0);
    held.end();
    await running;
    expect(await admission.run(async () => 'again')).toBe('again');
  });

  it('frees the slot of work that throws', async () => {
    const admission = new Admission(options({}));
    await expect(admission.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(admission.inFlight).toBe(0);
  });

  it('exports the requests in flight and queued, and the ones it shed by reason', async () => {
    const registry = createMetricsRegistry('admission-test');
    const admission = new Admission(options({ queueLength: 1, queueTimeoutMs: 60_000 }), registry);
    const held = heldWork();
    const running = admission.run(held.work);
    const waiting = admission.run(async () => 'queued');
    await refusal(admission.run(async () => 'never'));
    const values = async (name: string) =>
      ((await registry.getSingleMetric(name)?.get())?.values ?? []).map(({ labels, value }) => ({
        labels,
        value,
      }));
    expect(await values('http_admission_requests')).toEqual([
      { labels: { state: 'in_flight' }, value: 1 },
      { labels: { state: 'queued' }, value: 1 },
    ]);
    expect(await values('http_admission_shed_total')).toEqual([
      { labels: { reason: 'queue_full' }, value: 1 },
    ]);
    held.end();
    await Promise.all([running, waiting]);
  });
});

describe('Admission with the adaptive limit', () => {
  const adaptive = (more: Partial<AdmissionOptions>) =>
    options({
      limit: 2,
      queueLength: 256,
      queueTimeoutMs: 60_000,
      adaptive: { minLimit: 1, expectedWaitMs: 100, sagaBacklogMs: 1_000 },
      ...more,
    });

  /** Requests of `ms` each on the injected clock, run one after the other, to measure the work. */
  async function measured(admission: Admission, clock: { ms: number }, count: number, ms: number) {
    for (let i = 0; i < count; i++)
      await admission.run(async () => {
        clock.ms += ms;
      });
  }

  it('queues a burst far beyond the fixed queue while its expected wait is short, and serves it all', async () => {
    const clock = { ms: 0 };
    const admission = new Admission(adaptive({ limit: 1 }), undefined, undefined, () => clock.ms);
    await measured(admission, clock, 20, 2); // 2 ms a request: 50 queued wait about 100 ms
    const held = heldWork();
    const running = admission.run(held.work);
    const burst = Array.from({ length: 40 }, (_, i) => admission.run(async () => i));
    expect(admission.queued).toBe(40);
    held.end();
    expect(await Promise.all(burst)).toHaveLength(40);
    await running;
    expect(admission.inFlight).toBe(0);
  });

  it('refuses on arrival, as expected_wait, a request the queue would not reach in time', async () => {
    const clock = { ms: 0 };
    const registry = createMetricsRegistry('admission-adaptive-test');
    const admission = new Admission(adaptive({ limit: 1 }), registry, undefined, () => clock.ms);
    await measured(admission, clock, 20, 40); // 40 ms a request: the third in the queue waits 120 ms
    const held = heldWork();
    const running = admission.run(held.work);
    const waiting = [admission.run(async () => 'a'), admission.run(async () => 'b')];
    expect(admission.queued).toBe(2);
    const refused = await refusal(admission.run(async () => 'never'));
    expect(refused).toMatchObject({ code: 'OVERLOADED', reason: 'expected_wait' });
    expect(admission.queued).toBe(2);
    expect((await registry.getSingleMetric('http_admission_limit')?.get())?.values[0]?.value).toBe(1);
    held.end();
    expect(await Promise.all(waiting)).toEqual(['a', 'b']);
    await running;
  });

  it('waits out a pause: work slowed for a moment does not refuse what the queue serves in time', async () => {
    const clock = { ms: 0 };
    const admission = new Admission(adaptive({ limit: 1 }), undefined, undefined, () => clock.ms);
    await measured(admission, clock, 200, 2); // typically 2 ms a request
    await measured(admission, clock, 5, 200); // then a pause: five requests of 200 ms each
    const held = heldWork();
    const running = admission.run(held.work);
    // Ten queued wait about ten typical requests (under 7 ms each on average, with the pause), within
    // the 100 ms bound, though the recent requests took 200 ms each.
    const burst = Array.from({ length: 10 }, (_, i) => refusal(admission.run(async () => i)));
    expect(admission.queued).toBe(10);
    held.end();
    expect(await Promise.all(burst)).toEqual(burst.map(() => undefined));
    await running;
  });

  it('refuses on arrival once no slot has come free for as long as a queued request may wait (a stall)', async () => {
    const clock = { ms: 0 };
    const admission = new Admission(
      adaptive({ limit: 1, queueTimeoutMs: 500 }),
      undefined,
      undefined,
      () => clock.ms,
    );
    await measured(admission, clock, 20, 2);
    const held = heldWork();
    const running = admission.run(held.work);
    const queued = admission.run(async () => 'queued'); // 2 ms expected
    clock.ms += 400; // the held request is stuck, yet not for longer than the queue's timeout
    const alsoQueued = admission.run(async () => 'also queued');
    clock.ms += 200; // nothing came free for 600 ms: a stall
    expect(await refusal(admission.run(async () => 'never'))).toMatchObject({ reason: 'expected_wait' });
    held.end();
    expect([await queued, await alsoQueued]).toEqual(['queued', 'also queued']);
    await running;
  });

  it('queues a burst that arrives while one slow request runs on an otherwise idle API: no stall', async () => {
    const clock = { ms: 0 };
    const admission = new Admission(
      adaptive({ limit: 2, queueTimeoutMs: 500 }),
      undefined,
      undefined,
      () => clock.ms,
    );
    await measured(admission, clock, 20, 2);
    const slow = heldWork();
    const running = admission.run(slow.work);
    clock.ms += 600; // one slow request, longer than a queued request may wait; nothing else ran
    const burstHeld = heldWork();
    const burstFirst = admission.run(burstHeld.work); // the free slot: just admitted, just started
    // Every slot taken, but one only now: the burst queues, it is not refused as a stall.
    const queued = refusal(admission.run(async () => 'queued'));
    expect(admission.queued).toBe(1);
    burstHeld.end();
    expect(await queued).toBeUndefined(); // served, not refused
    slow.end();
    await Promise.all([running, burstFirst]);
  });

  it('admits fewer at once while the saga backlog is past its bound, never fewer than the minimum', async () => {
    const clock = { ms: 0 };
    let backlogMs = 5_000;
    const admission = new Admission(
      adaptive({ limit: 10, adaptive: { minLimit: 3, expectedWaitMs: 100, sagaBacklogMs: 1_000 } }),
      undefined,
      { ageMs: () => backlogMs },
      () => clock.ms,
    );
    for (let i = 0; i < 40; i++) {
      await measured(admission, clock, 1, 5);
      clock.ms += 250;
    }
    expect(admission.limit).toBe(3);
    const held = [heldWork(), heldWork(), heldWork()];
    const running = held.map((h) => admission.run(h.work));
    expect(admission.inFlight).toBe(3);
    const queued = admission.run(async () => 'after');
    expect(admission.queued).toBe(1);
    backlogMs = 0;
    for (const h of held) h.end();
    await Promise.all([...running, queued]);
    expect(admission.inFlight).toBe(0);
  });
});
