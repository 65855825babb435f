// The system benchmark, the headline figure: how many orders per second the whole saga sustains.
//
//   npm run bench:system                          # both variants, 60 s steps (about 40-60 minutes)
//   node bench/system.ts --step 20s               # quicker, shorter steps (the report says so)
//   node bench/system.ts --variants current       # only the code of this checkout
//   node bench/system.ts --variants current,cdc   # polling relays against Debezium connectors
//   node bench/system.ts --variants shipped,current --fixed-rate 50   # what tracing costs, as shipped
//   node bench/system.ts --variants shipped@400e20f,shipped --reference shipped@400e20f   # against a revision, as shipped
//   node bench/system.ts --variant-env fixed-limit:ADMISSION_LIMITER=fixed \
//     --variants fixed-limit,current --capacity 250 --factors 0.8,2 --step 30s   # two settings side by side
//
// Each variant is the real system as processes — orders, inventory, billing and their three relays,
// started by the chaos suite's stack on fresh databases — on one Kafka broker of the benchmark's
// own. "current" is this checkout; "baseline" is the code of an earlier revision (--baseline-rev,
// default: the last commit before the throughput work), checked out into .local/bench/ and
// installed there, so the gain is a ratio measured side by side in one run, on the same machine.
// Any variant may name a revision after an @ ("shipped@400e20f", "current@bfada78"): the code of that
// revision, prepared as the baseline is, run as the variant before the @ says. With --reference, the
// results file gets the ratios of every other variant against that one (bench/system/targets.ts).
// "cdc" is this checkout with every outbox published by a Debezium connector on a Kafka Connect
// worker of its own, as the chaos suite's CDC scenarios run it (tools/chaos/src/faults/ownConnect.ts);
// its relays only watch their slots and delete what the slots confirmed. The worker's CPU is counted
// (`connect`), and PostgreSQL's includes the walsenders decoding for the connectors.
// "shipped" is this checkout as `./dev demo` runs it: every process exports its spans to a real
// Zipkin (the demo's heap and span bound) and a real Prometheus scrapes them and evaluates the
// alert rules every 5 s; the Zipkin and Prometheus CPU is counted. "current" has tracing off.
//
// For each variant: raise stock and the payment limit (nothing is refused), warm up, then offer
// rising constant rates of valid orders (the load generator), each for --step: double while the
// saga keeps up, then bisect (bench/system/capacitySearch.ts says what "keeps up" means: the API
// accepts the rate, end-to-end p99 <= 1 s, no backlog left when the load stops, everything
// settles). Then latency at 50% and 90% of the capacity found, and goodput offered 1.5× and 2× the
// capacity (what the orders API's admission limit keeps). The fixed --fixed-rate is measured twice:
// right after the warm-up, on the stack as every variant starts it (the figure the targets read),
// and again after everything else, on tables grown by as many orders as that variant accepted.
// --factors replaces 0.5,0.9,1.5,2; --capacity skips the search and takes the figure given (from an
// earlier run), so that settings can be compared at the same offered rates in a short run.
// --variant-env NAME:KEY=VALUE (repeatable) names a variant: this checkout with that environment;
// a NAME that starts with "shipped-" runs as shipped (Zipkin and Prometheus beside it), so a setting
// can be compared as shipped too (shipped-fixed:ADMISSION_LIMITER=fixed).
// CPU ms per order per process (/proc utime+stime over the load) and resident memory at capacity.
// Results: bench/results/system/system.json and .md; docs/benchmarks.md explains them.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type * as StackModule from '@outbox/chaos';
import { type OwnConnect, startOwnConnect } from '@outbox/chaos/own-connect';
import { freePort } from '@outbox/devstack/ports';
import { alertRulesFile, DEMO_PROMETHEUS_INTERVAL_SECONDS } from '@outbox/devstack/prometheus-config';
import { startPrometheus, type TestPrometheus } from '@outbox/devstack/testing/prometheus';
import { startTestBroker } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { ZipkinServer } from '@outbox/devstack/zipkin-server';
import { environment, positiveNumber } from './support/args.ts';
import { defineBench, duration, env, list, number, optional, repeated, text } from './support/bench.ts';
import { checkoutOf as checkoutAt, revisionOf } from './support/checkouts.ts';
import { machineInfo, postgresInfo } from './support/environment.ts';
import { STACK_PROCESSES as PROCESSES, postgresUrl, stackDatabaseUrls } from './support/stack.ts';
import { DEFAULT_CRITERIA } from './system/capacitySearch.ts';
import { describeStep, measureStep, type Stack, searchCapacity } from './system/measure.ts';
import type { Step, Variant, VariantReport } from './system/records.ts';
import { markdown } from './system/report.ts';

const BEFORE_THROUGHPUT_WORK = '63a180e';
const bench = defineBench({
  name: 'system',
  logAs: 'bench:system',
  about: 'The headline figure: how many orders per second the whole saga sustains, variant beside variant.',
  options: {
    variants: list(
      'baseline,current',
      'baseline, current, shipped, cdc, a --variant-env name; any after @ a revision',
    ),
    baselineRev: text(BEFORE_THROUGHPUT_WORK, "the baseline's revision"),
    step: duration('60s', 'how long each offered rate runs'),
    startRate: number(25, 'the capacity search starts here, orders/s'),
    maxRate: number(1600, 'and stops here'),
    fixedRate: number(30, 'the rate also measured as is, orders/s'),
    drain: duration('30s', 'how long a step may take to settle after its load'),
    deadline: duration('75m', 'no new step after this long'),
    // ADMISSION_QUEUE_TIMEOUT_MS=200, say: a setting measured against a run without it.
    env: env('KEY=VALUE for every process of every variant, repeatable'),
    variantEnv: repeated(
      'NAME:KEY=VALUE, repeatable: a variant, this checkout with that environment',
      (name, specs) => {
        const named: Record<string, Record<string, string>> = {};
        for (const spec of specs) {
          const at = spec.indexOf(':');
          if (at < 1) throw new Error(`--${name} ${spec}: expected NAME:KEY=VALUE`);
          const variant = spec.slice(0, at);
          named[variant] = { ...named[variant], ...environment(name, [spec.slice(at + 1)]) };
        }
        return named;
      },
    ),
    capacity: optional('skip the search and take this capacity, orders/s', positiveNumber),
    factors: text('0.5,0.9,1.5,2', 'the fractions of the capacity measured after the search', (name, value) =>
      value.split(',').map((factor) => positiveNumber(name, factor)),
    ),
    reference: optional('the variant the others are compared with (bench/system/targets.ts)'),
  },
});
const { args } = bench;
const stepMs = args.step;
const extraEnv = args.env;
/** Named variants: this checkout with more environment (`fixed-limit:ADMISSION_LIMITER=fixed`). */
const variantEnv = args.variantEnv;
const { factors } = args;
const drainMs = args.drain;
const deadline = Date.now() + args.deadline;
const log = bench.log;

/** A variant's kind and, after an @, the revision whose code it runs (`shipped@400e20f`). */
function parseVariant(variant: Variant): { kind: string; rev?: string } {
  const [kind = variant, rev] = variant.split('@');
  return rev ? { kind, rev } : { kind };
}

/** The shipped variant, or a named one built on it (`shipped-…`), at any revision. */
const isShipped = (variant: Variant) => {
  const { kind } = parseVariant(variant);
  return kind === 'shipped' || kind.startsWith('shipped-');
};

/** What the shipped variant runs beside the system: the demo's trace store and metrics. */
type Observability = { zipkin: ZipkinServer; prometheus?: TestPrometheus };

async function startZipkin(): Promise<ZipkinServer> {
  const zipkin = new ZipkinServer({ name: 'bench-system', port: await freePort() });
  await zipkin.start();
  await zipkin.waitUntilReady();
  return zipkin;
}

/** The code of the variant's revision (support/checkouts.ts), or this checkout. */
function checkoutOf(variant: Variant): string {
  const { kind, rev } = parseVariant(variant);
  return checkoutAt(rev ?? (kind === 'baseline' ? args.baselineRev : undefined), log);
}

async function startStack(
  variant: Variant,
  brokers: string[],
): Promise<{ stack: Stack; connect?: OwnConnect; observability?: Observability }> {
  // The chaos stack of that checkout: tools/chaos since the packages were split by role, packages/chaos before.
  const checkout = checkoutOf(variant);
  const stackModule = ['tools/chaos/src/stack.ts', 'packages/chaos/src/stack.ts']
    .map((path) => join(checkout, path))
    .find((path) => existsSync(path));
  if (!stackModule) throw new Error(`no chaos stack in ${checkout}`);
  const module = (await import(stackModule)) as typeof StackModule;
  // Before the stack, as the chaos runner does: the worker's JVM warms up while the services start.
  const { kind } = parseVariant(variant);
  const connect = kind === 'cdc' ? await startOwnConnect('bench-system', brokers) : undefined;
  const zipkin = isShipped(variant) ? await startZipkin() : undefined;
  const observability: Observability | undefined = zipkin ? { zipkin } : undefined;
  try {
    const env: Record<string, Record<string, string>> = Object.fromEntries(
      PROCESSES.map((name) => [
        name,
        { ...(zipkin ? zipkin.tracingEnv(name) : {}), ...extraEnv, ...variantEnv[kind] },
      ]),
    );
    // Nothing refused: every order is a valid one the saga confirms.
    env.billing = { ...env.billing, PAYMENT_LIMIT_CENTS: '100000000000' };
    const stack = await module.startChaosStack({
      // A topic prefix and a database name take no "@": `shipped@400e20f` becomes `shipped_400e20f`.
      label: `bench_${variant.replace(/[^\w-]/g, '_')}`,
      kafkaBrokers: brokers,
      postgresUrl,
      ...(connect ? { connectUrl: connect.worker.url, replicationSlots: connect.slots } : {}),
      env,
    });
    if (observability)
      observability.prometheus = await startPrometheus(
        Object.fromEntries(PROCESSES.map((name) => [name, stack.process(name).port])),
        [alertRulesFile],
        { intervalSeconds: DEMO_PROMETHEUS_INTERVAL_SECONDS },
      );
    // Before the load: a row committed before its connector's slot exists is never published.
    await connect?.register(stackDatabaseUrls(stack), stack.topicPrefix);
    await queryOnce(stack.databases.inventory.url, 'update stock set available = 1000000000');
    return { stack, ...(connect ? { connect } : {}), ...(observability ? { observability } : {}) };
  } catch (error) {
    await connect?.dispose();
    await stopObservability(observability);
    throw error;
  }
}

async function stopObservability(observability: Observability | undefined) {
  await observability?.prometheus?.stop();
  await observability?.zipkin.stop();
}

function processPids(
  stack: Stack,
  brokerPid: number | undefined,
  connect?: OwnConnect,
  observability?: Observability,
) {
  const pids: Record<string, number | undefined> = {
    ...Object.fromEntries(PROCESSES.map((name) => [name, stack.process(name).pid])),
    kafka: brokerPid,
    ...(connect ? { connect: connect.worker.pid } : {}),
    ...(observability ? { zipkin: observability.zipkin.pid, prometheus: observability.prometheus?.pid } : {}),
  };
  return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, pid ? [pid] : []]));
}

/** The steps at `factors` × the capacity: below it for latency, above it for goodput. */
async function measureFactors(
  report: VariantReport,
  capacity: number,
  measure: (rate: number) => Promise<Step>,
) {
  report.overload = [];
  report.underload = [];
  for (const factor of factors) {
    if (Date.now() > deadline) break;
    const step = await measure(Math.max(1, Math.round(capacity * factor)));
    log(`${report.variant} at ${factor}×: ${describeStep(step)}, ${step.shed} shed`);
    if (factor > 1) report.overload.push(step);
    else report.underload.push(step);
    if (factor === 0.5) report.atHalfCapacity = step;
    if (factor === 0.9) report.atNinetyPercent = step;
  }
}

async function benchVariant(variant: Variant, brokers: string[], brokerPid: number | undefined) {
  const checkout = checkoutOf(variant);
  const revision = revisionOf(checkout);
  log(`${variant} (${revision}): starting the stack`);
  const { stack, connect, observability } = await startStack(variant, brokers);
  const report: VariantReport = { variant, checkout, revision, steps: [] };
  try {
    const measure = (rate: number, durationMs = stepMs) =>
      measureStep({
        stack,
        pids: processPids(stack, brokerPid, connect, observability),
        rate,
        durationMs,
        drainMs,
        cdc: connect !== undefined,
      });
    log(`${variant}: warm-up`);
    await measure(20, 10_000);
    // Before the search: a variant that accepts more would otherwise be measured on bigger tables.
    report.atFixedRate = await measure(args.fixedRate);
    report.fixedRateAt = 'start';
    log(`${variant} at ${args.fixedRate}/s: ${describeStep(report.atFixedRate)}`);
    if (args.capacity === undefined) {
      const search = await searchCapacity({
        measure,
        limits: {
          start: args.startRate,
          max: args.maxRate,
          resolution: 0.1,
        },
        deadline,
        log: (message) => log(`${variant} ${message}`),
      });
      report.steps.push(...search.steps);
      report.capacity = search.capacity;
    } else {
      report.capacity = args.capacity;
      report.capacityGiven = true;
    }
    if (report.capacity !== undefined) await measureFactors(report, report.capacity, measure);
    if (Date.now() < deadline) {
      report.atFixedRateAfterSearch = await measure(args.fixedRate);
      log(
        `${variant} at ${args.fixedRate}/s after the search: ${describeStep(report.atFixedRateAfterSearch)}`,
      );
    }
  } finally {
    await stack.stop();
    await connect?.dispose();
    await stopObservability(observability);
  }
  return report;
}

const variants = args.variants.map((v) => v.trim()) as Variant[];
for (const variant of variants)
  if (
    !['baseline', 'current', 'shipped', 'cdc', ...Object.keys(variantEnv)].includes(
      parseVariant(variant).kind,
    )
  )
    throw new Error(`unknown variant ${variant}`);
if (args.reference !== undefined && !variants.includes(args.reference))
  throw new Error(`--reference ${args.reference} is not one of --variants ${args.variants.join(',')}`);
for (const variant of variants) checkoutOf(variant); // prepare the baseline before anything runs
log(`criteria: ${JSON.stringify(DEFAULT_CRITERIA)}`);
// Read before the run: without autovacuum every table grows with dead rows through the run, and its
// last steps pay for all the earlier ones (docs/performance.md, "autovacuum on").
const server = await postgresInfo(postgresUrl, ['autovacuum', 'autovacuum_naptime', 'max_wal_size']);
if (server.autovacuum !== 'on')
  log('warning: PostgreSQL runs with autovacuum off; the late steps will pay for it');
const { broker, dispose } = await startTestBroker('bench-system');
const reports: VariantReport[] = [];
const stopping = async () => {
  await dispose().catch(() => {});
  process.exit(130);
};
process.once('SIGINT', () => void stopping());
try {
  for (const variant of variants) reports.push(await benchVariant(variant, broker.brokers, broker.pid));
} finally {
  await dispose();
}
const meta = {
  date: new Date().toISOString(),
  machine: machineInfo(),
  postgres: `${server.version}, autovacuum ${server.autovacuum} (naptime ${server.autovacuum_naptime}), max_wal_size ${server.max_wal_size}`,
  criteria: DEFAULT_CRITERIA,
  args: bench.given as Parameters<typeof markdown>[1]['args'],
};
// The shipped variants sample traces to a Zipkin of their own (startZipkin); the others export none.
const tracing = variants.some(isShipped)
  ? `per variant: sampled to Zipkin in ${variants.filter(isShipped).join(', ')}, off in the others`
  : 'off';
bench.write({ ...meta, reports }, markdown(reports, meta, stepMs), tracing);
process.exit(0);
