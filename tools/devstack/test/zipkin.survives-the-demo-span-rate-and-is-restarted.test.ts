import { execFileSync } from 'node:child_process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { orderTraceSpans, type ZipkinSpanJson } from '@outbox/devstack/testing/order-trace-spans';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/ports.ts';
import { isProcessAlive, signal } from '../src/processes.ts';
import { superviseZipkin } from '../src/supervisor.ts';
import { ZipkinServer } from '../src/zipkinServer.ts';

// The demo's Zipkin, as the demo starts it (default heap and span bound), under the spans of the
// demo at capacity: 400 orders/s × 11 spans an order (docs/tracing.md). The old bound (50,000 spans
// in 256 MiB) died of OutOfMemoryError within two minutes at 30 orders/s of the old, heavier
// spans; this one must take more than twice the old bound of ours and still answer. The spans are
// posted straight to its API, shaped like ours (orderTraceSpans), in the SDK's batches of 512.

useLeakGuard();

const ORDERS_PER_SECOND = 400;
const SPANS_PER_ORDER = 11;
const OLD_BOUND = 50_000;
/** The old bound twice, and then some: about 28 s at the target rate. */
const SPANS_TO_POST = 2.5 * OLD_BOUND;
/** A machine too busy to post at the target rate takes longer, up to this. */
const LOAD_DEADLINE_MS = 90_000;

let zipkin: ZipkinServer;

beforeAll(async () => {
  zipkin = new ZipkinServer({ name: `test-load-${process.pid}`, port: await freePort() });
  await zipkin.start();
  await zipkin.waitUntilReady(120_000);
}, 180_000);

afterAll(async () => {
  await zipkin?.stop();
});

async function post(spans: ZipkinSpanJson[]): Promise<number> {
  const res = await fetch(`${zipkin.url}/api/v2/spans`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(spans),
    signal: AbortSignal.timeout(30_000),
  });
  await res.arrayBuffer();
  return res.status;
}

async function traceSpans(traceId: string): Promise<number> {
  const res = await fetch(`${zipkin.url}/api/v2/trace/${traceId}`, { signal: AbortSignal.timeout(10_000) });
  return res.ok ? ((await res.json()) as unknown[]).length : 0;
}

/** Heap in use after a full GC, in MiB (the JDK's jcmd, as bench/zipkin-span-weight.ts reads it). */
function heapAfterGcMb(pid: number): number {
  execFileSync('jcmd', [String(pid), 'GC.run']);
  const info = execFileSync('jcmd', [String(pid), 'GC.heap_info'], { encoding: 'utf8' });
  return Number(/used (\d+)K/.exec(info)?.[1]) / 1024;
}

describe("the demo's Zipkin", () => {
  it(`keeps answering under ${ORDERS_PER_SECOND} orders/s of spans, past twice the old bound`, async () => {
    expect(zipkin.maxSpans).toBeGreaterThan(OLD_BOUND);
    const started = Date.now();
    let posted = 0;
    let firstTrace: string | undefined;
    let lastTrace = '';
    const failures: string[] = [];
    let slowestHealthMs = 0;
    // Every 100 ms the spans due by then, in batches of 512 (two requests in flight at most, as two
    // of the six processes exporting at once); meanwhile, /health answers every half second.
    let stopProbing = false;
    const probing = (async () => {
      while (!stopProbing) {
        const t = Date.now();
        const ok = await fetch(`${zipkin.url}/health`, { signal: AbortSignal.timeout(10_000) }).then(
          (res) => res.ok,
          () => false,
        );
        slowestHealthMs = Math.max(slowestHealthMs, Date.now() - t);
        if (!ok) failures.push(`/health failed at ${Date.now() - started} ms`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    })();
    const inFlight = new Set<Promise<void>>();
    while (posted < SPANS_TO_POST && Date.now() - started < LOAD_DEADLINE_MS) {
      const due = Math.min(
        SPANS_TO_POST,
        Math.floor(((Date.now() - started) / 1000) * ORDERS_PER_SECOND * SPANS_PER_ORDER),
      );
      while (posted < due && inFlight.size < 2) {
        const batch: ZipkinSpanJson[] = [];
        while (batch.length < 512) batch.push(...orderTraceSpans('load'));
        firstTrace ??= batch[0]?.traceId;
        lastTrace = batch[batch.length - 1]?.traceId ?? lastTrace;
        posted += batch.length;
        const request: Promise<void> = post(batch).then(
          (status) => {
            if (status !== 202) failures.push(`POST answered ${status}`);
          },
          (error: unknown) => {
            failures.push(`POST failed: ${String(error)}`);
          },
        );
        inFlight.add(request);
        void request.finally(() => inFlight.delete(request));
      }
      await Promise.race([...inFlight, new Promise((resolve) => setTimeout(resolve, 100))]);
    }
    await Promise.all(inFlight);
    stopProbing = true;
    await probing;
    const seconds = (Date.now() - started) / 1000;
    const pid = zipkin.pid;
    console.log(
      `posted ${posted} spans in ${seconds.toFixed(1)} s (${Math.round(posted / seconds / SPANS_PER_ORDER)} orders/s), ` +
        `bound ${zipkin.maxSpans}, slowest /health ${slowestHealthMs} ms, ` +
        `heap after GC ${pid === undefined ? '?' : heapAfterGcMb(pid).toFixed(0)} of ${zipkin.heapMb} MiB`,
    );

    expect(failures).toEqual([]);
    expect(posted).toBeGreaterThanOrEqual(SPANS_TO_POST);
    // Paced at the target rate; a shared 2-core machine busy with other work may fall behind it
    // (the test then posts as fast as it can, which is still more than the old store survived).
    expect(posted / seconds).toBeGreaterThan(0.5 * ORDERS_PER_SECOND * SPANS_PER_ORDER);
    // Still up, still answering: the newest order's trace is whole, the oldest was dropped for room.
    expect(pid !== undefined && isProcessAlive(pid)).toBe(true);
    expect(await traceSpans(lastTrace)).toBe(SPANS_PER_ORDER);
    expect(await traceSpans(firstTrace ?? '')).toBe(0);
  }, 150_000);

  it('is started again, and says so, when it dies', async () => {
    const messages: string[] = [];
    const supervisor = superviseZipkin(zipkin, { report: (message) => messages.push(message) });
    try {
      const pid = zipkin.pid;
      expect(pid).toBeDefined();
      if (pid !== undefined) signal(pid, 'SIGKILL');
      const deadline = Date.now() + 120_000;
      while (!messages.some((m) => m.startsWith('Zipkin is back')) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(messages[0]).toMatch(/^Zipkin exited \(killed by SIGKILL\); the traces it held are lost/);
      expect(messages.at(-1)).toMatch(/^Zipkin is back at /);
      expect(zipkin.pid).not.toBe(pid);
      expect(await post(orderTraceSpans('after-restart'))).toBe(202);
    } finally {
      supervisor.stop();
      await supervisor.done;
    }
  }, 150_000);
});
