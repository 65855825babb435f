/** What bench:where-time-goes writes: its report's type and its Markdown. */
import { markdownTableLinesOf } from '@outbox/devstack/table';
import type { LatencySummary } from '@outbox/loadgen';
import type { ProfileShares } from '../support/cpuProfile.ts';
import type { MachineInfo } from '../support/environment.ts';
import { type BrokerRequests, brokerRequestsLines } from './brokerRequests.ts';
import type { familiesPerOrder } from './counts.ts';
import type { OutboxState } from './outboxState.ts';
import type { ReplyLockCounts } from './replyLocks.ts';

export type Statement = {
  database: string;
  family: string;
  calls: number;
  rows: number;
  meanMs: number;
  maxMs: number;
  query: string;
};

/** What this bench writes (`<out>.json`, beside the run record writeResults adds). */
export type WhereTimeGoes = {
  date: string;
  machine: MachineInfo;
  warmup: { rate: number; seconds: number };
  tracing: boolean;
  nodeOptions: string;
  env: Record<string, string>;
  /** With --tracing: the spans the receiver got. */
  spansReceived?: number;
  rate: number;
  seconds: number;
  accepted: number;
  /** Orders the API refused with 503 overloaded (each sent once). */
  shed?: number;
  /**
   * The machine over the load window: its busy share of every core, and this process's CPU (the
   * load generator's, and the bench's own bookkeeping) per accepted order.
   */
  loadWindow?: { machineBusy: number; loadGeneratorMsPerOrder: number };
  latencyMs: LatencySummary;
  cpuMsPerOrder: Record<string, number>;
  /** PostgreSQL's CPU ms per order by client (application_name), and the whole server's (`server`). */
  postgresByClient?: Record<string, number>;
  waitMsPerOrder: Record<string, number>;
  rssMiB: Record<string, number>;
  transactionsPerOrder: Record<string, number>;
  statementFamiliesPerOrder: ReturnType<typeof familiesPerOrder>;
  /** Empty when the server does not load pg_stat_statements. */
  statements: Statement[];
  outboxes: OutboxState[];
  /** With --cpu-prof: per Node process, its busy time in the window by part. */
  profiles: Record<string, ProfileShares>;
  /** With --broker-requests. */
  brokerRequests?: BrokerRequests;
  /** With --reply-locks: the orders of the window and the reply consumer's locks of their rows. */
  counts?: ReplyLockCounts;
};

/** What the figures read of a --reply-locks run (and of the runs of its own bench before it). */
export type ReplyLocks = { rate: number; counts: ReplyLockCounts };

/** The report's Markdown; `withStatements`: whether the server loads pg_stat_statements. */
export function markdownReport(report: WhereTimeGoes, withStatements: boolean): string {
  const { cpuMsPerOrder, waitMsPerOrder, statements, outboxes } = report;
  const perOrder = (calls: number) => (calls / Math.max(1, report.accepted)).toFixed(2);
  return [
    '# Where the time goes',
    '',
    `Run ${report.date}; ${JSON.stringify(report.machine)}; tracing ${report.tracing ? `on (${report.spansReceived} spans exported)` : 'off'}; NODE_OPTIONS ${report.nodeOptions ? `\`${report.nodeOptions}\`` : 'none'}; extra environment ${
      Object.keys(report.env).length
        ? `\`${Object.entries(report.env)
            .map(([key, value]) => `${key}=${value}`)
            .join(' ')}\``
        : 'none'
    }; after a warm-up of ${report.warmup.rate} orders/s for ${report.warmup.seconds} s, ` +
      `${report.rate} orders/s offered for ${report.seconds} s, ${report.accepted} accepted, ${report.shed} shed; ` +
      `the machine ${Math.round((report.loadWindow?.machineBusy ?? Number.NaN) * 100)}% busy, the load generator ${report.loadWindow?.loadGeneratorMsPerOrder} ms of CPU per accepted order; ` +
      `end-to-end p50 / p99 ${report.latencyMs.p50} / ${report.latencyMs.p99} ms.`,
    '',
    ...markdownTableLinesOf(Object.entries(cpuMsPerOrder), {
      process: ([name]) => name,
      'CPU ms per order': ([, ms]) => ms,
      'main thread waiting for a core, ms per order': ([name]) => waitMsPerOrder[name] ?? '—',
      'RSS MiB': ([name]) => report.rssMiB[name] ?? '—',
    }),
    '',
    "PostgreSQL's CPU ms per order by client (the stack's backends by application_name), and the whole server's (`server`: every process of it, those that ended in the window included, e.g. autovacuum workers, the WAL writer):",
    '',
    ...markdownTableLinesOf(Object.entries(report.postgresByClient ?? {}), {
      client: ([client]) => client,
      'CPU ms per order': ([, ms]) => ms,
    }),
    '',
    withStatements
      ? `Statements per order (pg_stat_statements): ${perOrder(statements.reduce((sum, s) => sum + s.calls, 0))} in all.`
      : 'pg_stat_statements is not loaded: `alter system set shared_preload_libraries = pg_stat_statements`, restart, `create extension pg_stat_statements`.',
    '',
    ...markdownTableLinesOf(report.statementFamiliesPerOrder, {
      'statement family': (f) => f.family,
      'calls per order': (f) => f.perOrder.toFixed(3),
    }),
    '',
    `Transactions per order (pg_stat_database, commits and rollbacks; approximate at the window's ends): ${Object.entries(
      report.transactionsPerOrder,
    )
      .map(([database, n]) => `${database} ${n}`)
      .join(', ')}.`,
    '',
    ...markdownTableLinesOf(statements, {
      database: (s) => s.database,
      'calls per order': (s) => perOrder(s.calls),
      'mean ms': (s) => s.meanMs,
      'max ms': (s) => s.maxMs,
      statement: (s) => `\`${s.query.replaceAll('|', '\\|')}\``,
    }),
    '',
    "Each outbox as the run left it: one claim (limit 100) on the relay's session settings under `EXPLAIN (ANALYZE, BUFFERS)`, rolled back; its dead and live rows (pg_stat_user_tables) and the claim indexes' sizes.",
    '',
    ...markdownTableLinesOf(outboxes, {
      database: (o) => o.database,
      'claim ms': (o) => o.claimExecutionMs,
      'claim buffers': (o) => o.claimSharedBlocks,
      'live rows': (o) => o.liveRows,
      'dead rows': (o) => o.deadRows,
      'claimable index KiB': (o) => o.claimableIndexKiB,
      'aggregate index KiB': (o) => o.aggregateIndexKiB,
    }),
    '',
    ...outboxes.map((o) => `- ${o.database}'s claim plan: ${o.claimPlan}`),
    '',
    ...optionalSections(report),
  ].join('\n');
}

/** What --broker-requests, --reply-locks and --cpu-prof add. */
function optionalSections(report: WhereTimeGoes): string[] {
  const { cpuMsPerOrder, waitMsPerOrder, profiles, counts } = report;
  const requests = report.brokerRequests;
  const msPerOrder = (ms: number) => (ms / Math.max(1, report.accepted)).toFixed(2);
  return [
    ...(requests ? brokerRequestsLines(requests) : []),
    ...(counts
      ? [
          `Reply locks (\`--reply-locks\`), once ${counts.decided} of the window's ${counts.orders} orders were decided (${counts.answered} answered):`,
          '',
          ...markdownTableLinesOf([counts], {
            'lock calls per order': (c) => c.lockCallsPerOrder,
            'order rows locked per order': (c) => c.lockRowsPerOrder,
            'reply transactions per order': (c) => c.replyTransactionsPerOrder,
          }),
          '',
        ]
      : []),
    ...Object.entries(profiles).flatMap(([name, shares]) => [
      `${name}'s main thread in the load window (\`--cpu-prof\`): ${msPerOrder(shares.busyMs)} ms busy per order, ` +
        `of which socket writes ${msPerOrder(shares.socketWritesMs)} ms (${percent(shares.socketWritesMs, shares.busyMs)}); ` +
        `/proc counted ${cpuMsPerOrder[name]} ms of CPU per order and ${waitMsPerOrder[name]} ms waiting for a core. ` +
        'Samples are taken on the wall clock, so a wait for a core lands on whatever was on the stack when the thread lost it.',
      '',
      ...markdownTableLinesOf(shares.parts, {
        'part (the first library on the stack)': (p) => p.part,
        'ms per order': (p) => msPerOrder(p.ms),
        'share of busy': (p) => percent(p.ms, shares.busyMs),
      }),
      '',
    ]),
  ];
}

function percent(part: number, whole: number): string {
  return `${Math.round((100 * part) / Math.max(whole, Number.EPSILON))}%`;
}
