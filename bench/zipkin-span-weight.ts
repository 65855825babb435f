/**
 * What one of our spans weighs in Zipkin's heap: the figure the demo's Zipkin is sized by
 * (tools/devstack/src/zipkinServer.ts, docs/tracing.md "A trace store that survives").
 *
 *   node bench/zipkin-span-weight.ts [--help]
 *
 * Starts a real Zipkin (the demo's jar, in-memory storage) with a heap and a span bound far above
 * the stages, so nothing is evicted, and posts whole orders' traces shaped like ours
 * (orderTraceSpans: 11 spans, our tags and resource) in batches of 512, as the SDK's batch span
 * processor sends them. After each stage it forces a full GC (`jcmd <pid> GC.run`) and reads the
 * heap in use (`jcmd <pid> GC.heap_info`): the growth over the baseline, divided by the spans added,
 * is the weight of one stored span, indexes included. Not a test: prints a table, writes
 * <out>.json and <out>.md.
 */

import { execFileSync } from 'node:child_process';
import { freePort } from '@outbox/devstack/ports';
import { markdownTableLinesOf } from '@outbox/devstack/table';
import { orderTraceSpans, type ZipkinSpanJson } from '@outbox/devstack/testing/order-trace-spans';
import { ZipkinServer } from '@outbox/devstack/zipkin-server';
import { defineBench, ints, oneOf } from './support/bench.ts';
import { loadavg, type MachineInfo, machineInfo } from './support/environment.ts';

const bench = defineBench({
  name: 'zipkin-span-weight',
  about: "What one of our spans weighs in Zipkin's heap: the figure the demo's Zipkin is sized by.",
  options: {
    stages: ints('20000,50000,100000', 'spans stored at which the heap is read'),
    // `sdk-default`: as before docs/tracing.md's cut; `service`: ours, name, version and instance.
    resource: oneOf('service', "the spans' resource (sdk-default: also the SDK's default detectors')", [
      'service',
      'sdk-default',
    ]),
  },
});
const { stages, resource } = bench.args;
const log = bench.log;
const extraTags = resource === 'sdk-default' ? await sdkDefaultResource() : {};

/** The SDK's default detectors' attributes in this process, as strings, as Zipkin's exporter tags them. */
async function sdkDefaultResource(): Promise<Record<string, string>> {
  const { defaultResource, detectResources, hostDetector, osDetector, processDetector } = await import(
    '@opentelemetry/resources'
  );
  const resource = defaultResource().merge(
    detectResources({ detectors: [processDetector, hostDetector, osDetector] }),
  );
  await resource.waitForAsyncAttributes?.();
  return Object.fromEntries(
    Object.entries(resource.attributes)
      .filter(([key]) => key !== 'service.name')
      .map(([key, value]) => [key, String(value)]),
  );
}
/** What this bench writes (`<out>.json`, beside the run record writeResults adds). */
export type SpanWeight = {
  machine: MachineInfo;
  startedAt: string;
  loadavgBefore: number[];
  loadavgAfter: number[];
  /** `service` (ours) or `sdk-default`. */
  resource: string;
  /** The SDK's default resource attributes every span also carried (`sdk-default`), else none. */
  extraTags: Record<string, string>;
  jsonBytesPerSpan: number;
  /** Spans stored and heap after a full GC before the stages: what each stage is measured over. */
  baseline: { spans: number; heap: number };
  rows: { spans: number; heapBytes: number; bytesPerSpan: number }[];
};

const BATCH = 512;
const WARM_UP_ORDERS = 200;

const zipkin = new ZipkinServer({
  name: 'bench-span-weight',
  port: await freePort(),
  heapMb: 2048,
  maxSpans: 10_000_000,
});

/** Heap in use after a full GC, in bytes, as the JVM itself reports it. */
function heapUsedAfterGc(pid: number): number {
  execFileSync('jcmd', [String(pid), 'GC.run']);
  const info = execFileSync('jcmd', [String(pid), 'GC.heap_info'], { encoding: 'utf8' });
  const used = /used (\d+)K/.exec(info)?.[1];
  if (!used) throw new Error(`cannot read the heap in use from jcmd GC.heap_info:\n${info}`);
  return Number(used) * 1024;
}

let posted = 0;
let postedBytes = 0;
async function postSpans(count: number): Promise<void> {
  let batch: ZipkinSpanJson[] = [];
  const send = async () => {
    const body = JSON.stringify(batch);
    const res = await fetch(`${zipkin.url}/api/v2/spans`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    if (res.status !== 202) throw new Error(`POST /api/v2/spans answered ${res.status}: ${await res.text()}`);
    posted += batch.length;
    postedBytes += Buffer.byteLength(body);
    batch = [];
  };
  const target = posted + count;
  while (posted + batch.length < target) {
    batch.push(...orderTraceSpans('bench', Date.now() * 1000, extraTags));
    if (batch.length >= BATCH) await send();
  }
  if (batch.length) await send();
}

const startedAt = new Date().toISOString();
const loadBefore = loadavg();
await zipkin.start();
const rows: SpanWeight['rows'] = [];
let baseline = { spans: 0, heap: 0 };
try {
  await zipkin.waitUntilReady(120_000);
  const pid = zipkin.pid;
  if (pid === undefined) throw new Error('Zipkin has no pid');
  await postSpans(WARM_UP_ORDERS * 11); // loads the collector's and the store's classes
  baseline = { spans: posted, heap: heapUsedAfterGc(pid) };
  log(`baseline: ${posted} spans, heap ${(baseline.heap / 2 ** 20).toFixed(1)} MiB after GC`);
  for (const stage of stages) {
    await postSpans(stage - (posted - baseline.spans));
    const heap = heapUsedAfterGc(pid);
    const bytesPerSpan = (heap - baseline.heap) / (posted - baseline.spans);
    rows.push({ spans: posted - baseline.spans, heapBytes: heap, bytesPerSpan });
    log(
      `${posted - baseline.spans} spans: heap ${(heap / 2 ** 20).toFixed(1)} MiB, ${Math.round(bytesPerSpan)} B/span`,
    );
  }
} finally {
  await zipkin.stop();
}

const markdown = [
  '# Zipkin: the heap one of our spans takes',
  '',
  `Command: \`node bench/zipkin-span-weight.ts --stages ${stages.join(',')} --resource ${resource}\`, ${startedAt}, load average before ${loadBefore.join(' ')}.`,
  `Spans shaped like ours (tools/devstack/src/testing/orderTraceSpans.ts), resource \`${resource}\`, ${Math.round(postedBytes / posted)} B of JSON each;`,
  `heap in use after a full GC, over a baseline of ${baseline.spans} spans (${(baseline.heap / 2 ** 20).toFixed(1)} MiB).`,
  '',
  ...markdownTableLinesOf(rows, {
    'spans stored': (row) => row.spans,
    'heap after GC (MiB)': (row) => (row.heapBytes / 2 ** 20).toFixed(1),
    'heap per span (B)': (row) => Math.round(row.bytesPerSpan),
  }),
  '',
].join('\n');
const report: SpanWeight = {
  machine: machineInfo(),
  startedAt,
  loadavgBefore: loadBefore,
  loadavgAfter: loadavg(),
  resource,
  extraTags,
  jsonBytesPerSpan: postedBytes / posted,
  baseline,
  rows,
};
bench.write(report, markdown, 'on: the spans it posts to Zipkin are what it measures');
