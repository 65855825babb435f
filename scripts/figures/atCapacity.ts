import { markdownTableOf } from '@outbox/devstack/table';
import type { Report as ConsumerResults } from '../../bench/consumer/report.ts';
import type { Report as RelayResults } from '../../bench/relay/report.ts';
import type { Written } from '../../bench/support/environment.ts';
import { resultsFile } from '../../bench/support/results.ts';
import { FAMILY } from '../../bench/where-time-goes/counts.ts';
import type { WhereTimeGoes as Report } from '../../bench/where-time-goes.ts';
import { day, load, num, percent, range } from './format.ts';
import { type FigureTable, ofFile } from './types.ts';

type WhereTimeGoes = Written<Report>;

/** Today's code near this host's capacity: the plain run, and the same run with every Node process profiled. */
const PLAIN = resultsFile('where-time-goes.rate-200.5a00e36.json');
const PROFILED = resultsFile('where-time-goes.cpu-prof-200.5a00e36.json');
const RELAY = resultsFile('relay-throughput.json');
const CONSUMER = resultsFile('consumer-throughput.json');
/** The throughput runs predate the writers' run records: their records are in the index of such files. */
const RUNS = 'bench/results/RUNS.json';
type Runs = {
  files: Record<string, { revision: { value: string | null }; tracing: { value: string | null } }>;
};

const DATABASES = ['orders', 'inventory', 'billing'];
const PROCESSES = ['orders', 'inventory', 'billing', 'relay-orders', 'relay-inventory', 'relay-billing'];
/** A relay's claim is either alone or carries the mark of the batch before it. */
const CLAIMS = [FAMILY.markWithNextClaim, FAMILY.claim];

/** "Prisma 49%, HTTP 19%": the two parts with the most busy samples, named by their first word. */
function largestParts(results: WhereTimeGoes, process: string): string {
  const profile = results.profiles[process];
  if (!profile) return '—';
  return profile.parts
    .slice(0, 2)
    .map(({ part, ms }) => `${part.split(' ')[0]} ${percent(ms / profile.busyMs)}`)
    .join(', ');
}

/** Every process's CPU per order near capacity, with the profiled run's largest parts beside it. */
export const costAtCapacity: FigureTable = {
  sources: [PLAIN, PROFILED],
  render({ read, link }) {
    const plain = read<WhereTimeGoes>(PLAIN);
    const profiled = read<WhereTimeGoes>(PROFILED);
    const cpu = (results: WhereTimeGoes) => (process: string) => num(results.cpuMsPerOrder[process], 2);
    const runs = [plain, profiled];
    return [
      markdownTableOf([...PROCESSES, 'kafka', 'postgres', 'total'], {
        process: (process) => process,
        [`CPU ms per order at ${num(plain.rate)}/s`]: cpu(plain),
        'the same, profiled': cpu(profiled),
        'largest parts of its busy samples (profiled)': (process) =>
          PROCESSES.includes(process) ? largestParts(profiled, process) : '—',
      }),
      '',
      `${link(PLAIN)}, ${link(PROFILED)}: ${day(plain.date)}, revision \`${plain.run.revision}\`, ` +
        `${plain.machine.cpuModel} ${plain.machine.cpus} vCPU, nothing else running (` +
        `${runs.map((run) => load(run.run.loadBefore, run.run.loadAfter)).join('; profiled: ')}), ` +
        `${num(plain.seconds)} s at ${num(plain.rate)}/s after ${num(plain.warmup.seconds)} s at ` +
        `${num(plain.warmup.rate)}/s, tracing ${plain.run.tracing}; end-to-end p50 / p99 ` +
        `${runs.map((run) => `${num(run.latencyMs.p50)} / ${num(run.latencyMs.p99)}`).join(' and ')} ms.`,
    ].join('\n');
  },
};

/** "14.9 statements and 4.5 transactions per order (orders 1.7, inventory 0.9, billing 2.0)". */
export const statementsAtCapacity = ofFile<WhereTimeGoes>(PLAIN, (results) => {
  const statements = results.statementFamiliesPerOrder.reduce((sum, family) => sum + family.perOrder, 0);
  const { all = Number.NaN, ...perDatabase } = results.transactionsPerOrder;
  const databases = Object.entries(perDatabase)
    .map(([database, count]) => `${database} ${num(count, 1)}`)
    .join(', ');
  return `${num(statements, 1)} statements and ${num(all, 1)} transactions per order (${databases})`;
});

/** Events each order sent through the relays and through the consumers' inboxes in the run. */
function eventsPerOrder(results: WhereTimeGoes, families: readonly string[], databases = DATABASES): number {
  const rows = results.statements
    .filter((s) => families.includes(s.family) && databases.includes(s.database))
    .reduce((sum, s) => sum + s.rows, 0);
  return rows / results.accepted;
}

/**
 * What a relay and a consumer cost per event in large batches (the throughput benches), and what
 * the run's publishes and applications per order would cost at those rates, beside what the relays,
 * the two consumers and the broker cost in the run: "0.19 ms … 0.13–0.14 ms …: 1.1 ms against 3.7".
 */
export const batchedCostPerEvent: FigureTable = {
  sources: [RELAY, CONSUMER, PLAIN, RUNS],
  render({ read, link }) {
    const record = read<Runs>(RUNS).files['relay-throughput/relay-throughput.json'];
    const relay = read<RelayResults>(RELAY);
    const consumer = read<Written<ConsumerResults>>(CONSUMER);
    const run = read<WhereTimeGoes>(PLAIN);
    const perEvent = (parts: Record<string, number> | undefined) =>
      Object.values(parts ?? {}).reduce((sum, seconds) => sum + seconds, 0);
    const relayMs = perEvent(relay.runs[0]?.summary.cpuPer1000.R1);
    const consumerMs = ['I', 'B'].map((key) => perEvent(consumer.runs[0]?.summary.cpuPer1000[key]));
    const publishes = eventsPerOrder(run, CLAIMS);
    const applications = eventsPerOrder(run, [FAMILY.inbox], ['inventory', 'billing']);
    const batched = publishes * relayMs + applications * Math.max(...consumerMs);
    const today = ['relay-orders', 'relay-inventory', 'relay-billing', 'inventory', 'billing', 'kafka']
      .map((process) => run.cpuMsPerOrder[process] ?? Number.NaN)
      .reduce((sum, ms) => sum + ms, 0);
    return (
      `${num(relayMs, 2)} ms of CPU per event for a relay in batches of ${num(relay.parameters.batchSize)} ` +
      `and ${range(consumerMs, 2)} ms for inventory's and billing's consumers in chunks of about ` +
      `${num(consumer.runs[0]?.summary.meanBatchSize.I)} (each with its share of the broker ` +
      `and PostgreSQL; ${link(RELAY)}: ${relay.machine.cpuModel}, ${day(relay.date)}, ` +
      `revision \`${record?.revision.value ?? '?'}\` (inferred from git), tracing ${record?.tracing.value ?? '?'}; ` +
      `${link(CONSUMER)}: ${consumer.run.cpuModel}, ${day(consumer.date)}, revision \`${consumer.run.revision}\`, ` +
      `tracing ${consumer.run.tracing}): the run's ${num(publishes, 1)} ` +
      `publishes and ${num(applications, 1)} applications in inventory and billing per order would cost about ${num(batched, 1)} ms, ` +
      `where the relays, the two consumers and the broker alone spent ${num(today, 1)} ms per order ` +
      'in the run above, their statements not counted'
    );
  },
};

/** Rows per call of some statement families in one database: the events a claim or a chunk carried. */
function rowsPerCall(results: WhereTimeGoes, database: string, families: readonly string[]): number {
  const matching = results.statements.filter((s) => s.database === database && families.includes(s.family));
  const calls = matching.reduce((sum, s) => sum + s.calls, 0);
  return matching.reduce((sum, s) => sum + s.rows, 0) / calls;
}

/** "3.8, 2.5 and 2.2 events per claim …; 12.4, 2.4 and 1.5 per chunk …", from the rows each statement returned. */
export const batchesAtCapacity = ofFile<WhereTimeGoes>(PLAIN, (results) => {
  const per = (families: readonly string[]) =>
    DATABASES.map((database) => num(rowsPerCall(results, database, families), 1)).join(', ');
  const claims = per(CLAIMS);
  const chunks = per([FAMILY.inbox]);
  return `${claims} events per claim for the orders, inventory and billing relays, and ${chunks} per transaction for the orders (replies), inventory and billing consumers`;
});

/** Today's defaults (the waits on) near their capacity, tracing off. */
const WAITING = resultsFile('where-time-goes.rate-450.5b10aaf.json');

/** "3.0 ms of CPU per order at 450/s: the orders process 0.81, PostgreSQL 1.14, the rest 1.05 together". */
export const costWithWaits = ofFile<WhereTimeGoes>(WAITING, (results) => {
  const { total = Number.NaN, orders = Number.NaN, postgres = Number.NaN } = results.cpuMsPerOrder;
  return (
    `${num(total, 1)} ms of CPU per order at ${num(results.rate)}/s (revision \`${results.run.revision}\`, ` +
    `tracing ${results.run.tracing}): the orders process ${num(orders, 2)} ms, PostgreSQL ${num(postgres, 2)}, ` +
    `the three relays, both consumers and the broker ${num(total - orders - postgres, 2)} together`
  );
});
