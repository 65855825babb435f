// The scaling benchmark: how the system's capacity grows with instances, relays and brokers.
//
//   npm run bench:scaling                                      # every cell, 60 s steps (hours)
//   node bench/scaling.ts --step 15s --cells broker:1,cluster:1,broker:2,cluster:2
//   node bench/scaling.ts --runs 3                              # medians over three runs
//
// A cell is a Kafka (`broker`: one node, replication factor 1; `cluster`: three nodes,
// replication factor 3, min.insync.replicas 2) and n: n instances of each service in its consumer
// group (orders, inventory, billing) and n relays on each outbox, as real processes (the chaos
// stack). The offered rate is shared evenly between the n orders APIs, as a load balancer would.
// For each cell, bench:system's capacity search on a fresh stack (bench/system/measure.ts: double,
// then bisect, until the saga no longer sustains the rate with e2e p99 <= 1 s). Recorded per step:
// CPU seconds per kind of process, and the machine's load average — on a 2-core machine the cores,
// not the design, are soon the limit, and these say when.
// Results: bench/results/scaling/scaling.json and .md; docs/scaling.md explains them.
import { startChaosStack } from '@outbox/chaos';
import { startTestBroker, startTestCluster } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { type Cell, type CellRun, type KafkaKind, markdown, type ScalingReport } from './scaling/report.ts';
import { positiveInt } from './support/args.ts';
import { defineBench, duration, int, number, text } from './support/bench.ts';
import { loadavg, machineInfo, postgresInfo } from './support/environment.ts';
import { postgresUrl } from './support/stack.ts';
import { median } from './support/stats.ts';
import { DEFAULT_CRITERIA } from './system/capacitySearch.ts';
import { measureStep, type Stack, searchCapacity } from './system/measure.ts';

const SERVICES = ['orders', 'inventory', 'billing'] as const;

const bench = defineBench({
  name: 'scaling',
  logAs: 'bench:scaling',
  about: "How the system's capacity grows with instances, relays and brokers.",
  options: {
    cells: text(
      'broker:1,cluster:1,broker:2,cluster:2,broker:4,cluster:4',
      'broker:<n> or cluster:<n>, n instances of each service and n relays per outbox',
      (name, value) =>
        value.split(',').map((cell): Cell => {
          const [kafka, n] = cell.trim().split(':');
          if (kafka !== 'broker' && kafka !== 'cluster')
            throw new Error(`--${name}: ${cell} is not broker:<n> or cluster:<n>`);
          return { kafka, instances: positiveInt(name, n ?? '') };
        }),
    ),
    runs: int(1, 'runs of every cell (capacity: the median)'),
    step: duration('60s', 'how long each offered rate runs'),
    startRate: number(50, 'the capacity search starts here, orders/s'),
    maxRate: number(3200, 'and stops here'),
    resolution: number(0.1, 'the bisection stops within this fraction'),
    drain: duration('30s', 'how long a step may take to settle after its load'),
    deadline: duration('6h', 'no new cell after this long'),
  },
});
const { args } = bench;
const { runs, cells } = args;
const stepMs = args.step;
const drainMs = args.drain;
const startedAt = Date.now();
const deadline = startedAt + args.deadline;
const limits = { start: args.startRate, max: args.maxRate, resolution: args.resolution };
const log = bench.log;

type Kafka = { kind: KafkaKind; brokers: string[]; pids: () => number[]; dispose(): Promise<void> };

/** One node (RF 1) or three (RF 3, min.insync.replicas 2), started once and shared by the cells. */
async function startKafka(kind: KafkaKind): Promise<Kafka> {
  log(`starting the Kafka ${kind}`);
  // Distinct labels: a test broker's or cluster's data dir is named after its label and the pid.
  if (kind === 'broker') {
    const { broker, dispose } = await startTestBroker('bench-scaling-broker');
    return { kind, brokers: broker.brokers, pids: () => (broker.pid ? [broker.pid] : []), dispose };
  }
  const { cluster, dispose } = await startTestCluster('bench-scaling-cluster');
  return {
    kind,
    brokers: cluster.brokers,
    pids: () => cluster.nodes.flatMap((node) => (node.pid ? [node.pid] : [])),
    dispose,
  };
}

/** The stack's processes by kind: every instance of a service together, every relay together. */
function pidsByKind(stack: Stack, kafka: Kafka): Record<string, number[]> {
  const pids: Record<string, number[]> = { orders: [], inventory: [], billing: [], relays: [] };
  for (const name of stack.names()) {
    const pid = stack.process(name).pid;
    if (!pid) continue;
    const kind = name.startsWith('relay-') ? 'relays' : name.replace(/-\d+$/, '');
    pids[kind]?.push(pid);
  }
  pids.kafka = kafka.pids();
  return pids;
}

async function benchCell(cell: Cell, kafka: Kafka, run: number): Promise<CellRun> {
  const extra = Object.fromEntries(SERVICES.map((name) => [name, cell.instances - 1]));
  const label = `bench_scaling_${cell.kafka}_${cell.instances}`;
  log(`${cell.kafka} × ${cell.instances} (run ${run}): starting the stack`);
  const stack = await startChaosStack({
    label,
    kafkaBrokers: kafka.brokers,
    ...(cell.kafka === 'cluster' ? { kafkaReplicationFactor: 3 } : {}),
    postgresUrl,
    extraInstances: extra,
    extraRelays: extra,
    // Nothing refused: every order is a valid one the saga confirms.
    env: { billing: { PAYMENT_LIMIT_CENTS: '100000000000' } },
  });
  try {
    await queryOnce(stack.databases.inventory.url, 'update stock set available = 1000000000');
    const ordersUrls = stack
      .names()
      .filter((name) => name === 'orders' || /^orders-\d+$/.test(name))
      .map((name) => stack.process(name).url);
    const measure = (rate: number, ms = stepMs) =>
      measureStep({ stack, pids: pidsByKind(stack, kafka), rate, durationMs: ms, drainMs, ordersUrls });
    log(`${cell.kafka} × ${cell.instances}: warm-up`);
    const warm = await measure(20, 10_000);
    if (!warm.settled) {
      // Nothing to search for: the saga does not even settle at 20/s (a broken stack, not a capacity).
      log(`${cell.kafka} × ${cell.instances}: the warm-up did not settle; skipping the cell`);
      return {
        run,
        steps: [warm],
        complete: false,
        error: 'warm-up at 20/s did not settle',
        loadavgAtEnd: loadavg(),
      };
    }
    const search = await searchCapacity({
      measure,
      limits,
      deadline,
      log: (message) => log(`${cell.kafka} × ${cell.instances} ${message}`),
    });
    return { run, ...search, loadavgAtEnd: loadavg() };
  } finally {
    await stack.stop();
  }
}

log(`criteria: ${JSON.stringify(DEFAULT_CRITERIA)}; cells: ${bench.given.cells}; ${runs} run(s)`);
const kinds = [...new Set(cells.map((cell) => cell.kafka))];
// Every Kafka the cells need runs for the whole benchmark, so each cell sees the same idle JVMs.
const kafkas = new Map<KafkaKind, Kafka>();
const disposeAll = () => Promise.allSettled([...kafkas.values()].map((kafka) => kafka.dispose()));
process.once('SIGINT', () => void disposeAll().then(() => process.exit(130)));
const results = cells.map((cell) => ({ ...cell, runs: [] as CellRun[] }));
let postgresVersion = 'PostgreSQL';
/** The results so far: written after every cell, so a run that dies later keeps what it measured. */
function save(): void {
  const report: ScalingReport = {
    date: new Date(startedAt).toISOString(),
    finished: new Date().toISOString(),
    machine: machineInfo(),
    postgres: postgresVersion,
    criteria: DEFAULT_CRITERIA,
    args: bench.given as ScalingReport['args'],
    cells: results.map((cell) => ({
      ...cell,
      medianCapacity: median(cell.runs.flatMap((r) => (r.capacity === undefined ? [] : [r.capacity]))),
    })),
  };
  bench.write(report, markdown(report, stepMs), 'off');
}
try {
  postgresVersion = (await postgresInfo(postgresUrl)).version ?? postgresVersion;
  for (const kind of kinds) kafkas.set(kind, await startKafka(kind));
  for (let run = 1; run <= runs; run++) {
    for (const result of results) {
      if (Date.now() > deadline) break;
      const kafka = kafkas.get(result.kafka);
      if (!kafka) continue;
      try {
        result.runs.push(await benchCell(result, kafka, run));
      } catch (err) {
        // One cell's failure (e.g. PostgreSQL's max_connections reached) is a result, not the end of the run.
        const error = err instanceof Error ? err.message : String(err);
        log(`${result.kafka} × ${result.instances}: failed: ${error}`);
        result.runs.push({ run, steps: [], complete: false, error, loadavgAtEnd: loadavg() });
      }
      save();
    }
  }
} finally {
  await disposeAll();
}
save();
process.exit(0);
