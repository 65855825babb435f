import { markdownTable, markdownTableOf } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import type { OutboxState } from '../../bench/where-time-goes/outboxState.ts';
import type { WhereTimeGoes } from '../../bench/where-time-goes.ts';
import { day, range } from './format.ts';
import type { FigureTable, Results } from './types.ts';

/** The parts of a `bench:where-time-goes` run these tables read, from its json or its report. */
type Run = Pick<WhereTimeGoes, 'date' | 'cpuMsPerOrder' | 'rssMiB'> & {
  /** Mean ms of the relay's claim by database; empty when pg_stat_statements was not loaded. */
  claimMeanMs: Record<string, number>;
  outboxes: Pick<OutboxState, 'database' | 'claimExecutionMs' | 'claimSharedBlocks' | 'claimableIndexKiB'>[];
};

const CLAIM = 'with claimable as';

function fromJson(results: WhereTimeGoes): Run {
  const claims = results.statements.filter((statement) => statement.query.startsWith(CLAIM));
  return {
    ...results,
    claimMeanMs: Object.fromEntries(claims.map((statement) => [statement.database, statement.meanMs])),
  };
}

/** The rows of the report's first table under `header`, as cells. */
function reportRows(report: string, header: string): string[][] {
  const lines = report.split('\n');
  const start = lines.findIndex((line) => line.startsWith(header));
  if (start < 0) throw new Error(`no table "${header}" in the report`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** A run kept only as its report (the first claim run: its json was not written). */
function fromReport(report: string): Run {
  const date = /^Run (\S+);/m.exec(report)?.[1];
  if (!date) throw new Error('the report names no run date');
  const processes = reportRows(report, '| process | CPU ms per order | RSS MiB |');
  const outboxes = reportRows(report, '| database | claim ms | claim buffers |');
  return {
    date,
    cpuMsPerOrder: Object.fromEntries(processes.map(([name = '', cpu]) => [name, Number(cpu)])),
    rssMiB: Object.fromEntries(processes.map(([name = '', , rss]) => [name, Number(rss)])),
    claimMeanMs: {},
    outboxes: outboxes.map(([database = '', claimMs, buffers, , , claimableKiB]) => ({
      database,
      claimExecutionMs: Number(claimMs),
      claimSharedBlocks: Number(buffers),
      claimableIndexKiB: Number(claimableKiB),
    })),
  };
}

const BITMAP = [
  resultsFile('where-time-goes.claim-bitmap-scan.run1.md'),
  resultsFile('where-time-goes.claim-bitmap-scan.json'),
];
const INDEX_RUN_1 = resultsFile('where-time-goes.claim-index-scan.run1.json');
/** The claim fix as committed, V8's default young generation: also the "before" of the memory table. */
const INDEX = resultsFile('where-time-goes.claim-index-scan.json');
const SEMI_SPACE = resultsFile('where-time-goes.semi-space-16.json');

function run(results: Results, path: string): Run {
  return path.endsWith('.md') ? fromReport(results.text(path)) : fromJson(results.read<WhereTimeGoes>(path));
}

/** A figure's spread over runs ("7.8–9.2"), from the runs that have it. */
function spread(runs: Run[], pick: (run: Run) => number | undefined, digits = 0): string {
  const values = runs.map(pick).filter((value): value is number => value !== undefined);
  return range(values, digits);
}
const orders = (found: Run) => found.outboxes.find((outbox) => outbox.database === 'orders');
const claimMean = (database: string) => (found: Run) => found.claimMeanMs[database];
const cpu = (process: string) => (found: Run) => found.cpuMsPerOrder[process];

/** The final claim on the orders outbox: buffers read, and its time (0.14 ms, or 9.2 ms). */
function finalClaim(runs: Run[]): string {
  const longest = Math.max(...runs.map((found) => orders(found)?.claimExecutionMs ?? 0));
  const time = spread(runs, (found) => orders(found)?.claimExecutionMs, longest < 1 ? 2 : 1);
  return `${spread(runs, (found) => orders(found)?.claimSharedBlocks)} (${time} ms)`;
}

/** The claim on an outbox that has seen 10,000 orders: bitmap heap scan against index scan, two runs each. */
export const claimOnGrownOutbox: FigureTable = {
  sources: [...BITMAP, INDEX_RUN_1, INDEX],
  render(results) {
    const columns = [BITMAP, [INDEX_RUN_1, INDEX]].map((paths) => paths.map((path) => run(results, path)));
    const row = (label: string, cell: (runs: Run[]) => string) => [label, ...columns.map(cell)];
    const ms = (pick: (found: Run) => number | undefined, digits: number) => (runs: Run[]) =>
      `${spread(runs, pick, digits)} ms`;
    return [
      markdownTable(
        ['at 30 orders/s after 10,000 orders', 'bitmap scan (2 runs)', 'index scan (2 runs)'],
        [
          row('claim mean, orders outbox', ms(claimMean('orders'), 2)),
          row(
            'claim mean, inventory / billing',
            (runs) =>
              `${spread(runs, claimMean('inventory'), 2)} / ${spread(runs, claimMean('billing'), 2)} ms`,
          ),
          row('final claim, orders: buffers (time)', finalClaim),
          row(
            '`outbox_claimable_idx`, orders',
            (runs) => `${spread(runs, (r) => orders(r)?.claimableIndexKiB)} KiB`,
          ),
          row('PostgreSQL CPU per order', ms(cpu('postgres'), 1)),
          row('whole system CPU per order', ms(cpu('total'), 1)),
        ],
      ),
      `Bitmap scan: ${BITMAP.map((path) => results.link(path)).join(', ')} (the first run kept as its report only, ` +
        'without a statement table: pg_stat_statements was not loaded yet); index scan: ' +
        `${results.link(INDEX_RUN_1)}, ${results.link(INDEX)}; ${day(columns[0]?.[0]?.date ?? '')}. ` +
        'The reports record no load average.',
    ].join('\n\n');
  },
};

const SERVICES = ['orders', 'inventory', 'billing'];
const RELAYS = ['relay-orders', 'relay-inventory', 'relay-billing'];

/** Resident memory and CPU per order with V8's default young generation and with 16 MiB semi-spaces. */
export const semiSpace: FigureTable = {
  sources: [INDEX, SEMI_SPACE],
  render(results) {
    const [defaults, small] = [run(results, INDEX), run(results, SEMI_SPACE)];
    // The whole system's resident memory is not measured: only its CPU has a row.
    const rows = [
      ...SERVICES.map((name) => ({ label: name, names: [name], rss: true })),
      { label: 'relays (3)', names: RELAYS, rss: true },
      { label: 'all (with PostgreSQL and Kafka)', names: ['total'], rss: false },
    ];
    const rssOf = (found: Run) => (row: (typeof rows)[number]) =>
      row.rss ? range(row.names.map((name) => found.rssMiB[name] ?? Number.NaN)) : '—';
    const cpuOf = (found: Run) => (row: (typeof rows)[number]) =>
      range(
        row.names.map((name) => cpu(name)(found) ?? Number.NaN),
        2,
      );
    return [
      markdownTableOf(rows, {
        process: ({ label }) => label,
        'RSS MiB, V8 default': rssOf(defaults),
        'RSS MiB, 16 MiB semi-space': rssOf(small),
        'CPU ms per order, default': cpuOf(defaults),
        'CPU ms per order, 16 MiB': cpuOf(small),
      }),
      `Default: ${results.link(INDEX)}; 16 MiB semi-spaces: ${results.link(SEMI_SPACE)}; ${day(small.date)}, ` +
        'one run each; the reports record no load average.',
    ].join('\n\n');
  },
};
