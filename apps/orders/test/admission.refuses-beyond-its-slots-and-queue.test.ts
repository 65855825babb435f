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
