import { ORDER_KINDS } from './orderMix.ts';
import type { Outcome } from './outcome.ts';
import type { LatencySummary } from './percentiles.ts';
import type { LoadResult } from './runLoad.ts';
import { isShed } from './sendOrder.ts';
import { type Table, tableAsMarkdown, tableAsText } from './table.ts';

/** The summary tables as text, for a terminal. */
export function formatSummary(result: LoadResult, outcome: Outcome): string {
  return [...summaryTables(result, outcome).map(tableAsText), ...notes(result, outcome)].join('\n\n');
}

/** The same tables as markdown, for a report file. */
export function formatMarkdown(result: LoadResult, outcome: Outcome): string {
  return [...summaryTables(result, outcome).map(tableAsMarkdown), ...notes(result, outcome)].join('\n\n');
}

function summaryTables(result: LoadResult, outcome: Outcome): Table[] {
  const tables = [sentTable(result), rejectedTable(result), finalStatesTable(outcome), latencyTable(outcome)];
  tables.push(eventsTable(outcome), eventTypesTable(outcome), consumersTable(outcome));
  return tables.filter((table) => table.rows.length > 0);
}

function sentTable(result: LoadResult): Table {
  const seconds = (result.finishedAt - result.startedAt) / 1000;
  const kinds = ORDER_KINDS.filter((kind) => result.orders.some((order) => order.kind === kind));
  const row = (label: string, orders: LoadResult['orders']) => [
    label,
    String(orders.length),
    String(orders.filter((order) => order.status === 201).length),
    String(orders.filter(isShed).length),
    String(orders.filter((order) => order.status !== 201 && !isShed(order)).length),
    String(orders.filter((order) => order.attempts > 1).length),
  ];
  return {
    title:
      `Orders sent: ${result.orders.length} at ${result.achievedRate.toFixed(1)}/s` +
      `${result.targetRate === undefined ? ' (burst)' : ` (${result.targetRate}/s asked)`}, ` +
      `all answered after ${seconds.toFixed(1)} s, seed ${result.seed}`,
    header: ['kind', 'sent', 'accepted', 'shed', 'rejected', 'retried'],
    rows: [
      ...kinds.map((kind) =>
        row(
          kind,
          result.orders.filter((o) => o.kind === kind),
        ),
      ),
      row('total', result.orders),
    ],
  };
}

function rejectedTable(result: LoadResult): Table {
  return {
    title: 'Rejected requests, by reason (nothing was created for them; shed ones are counted apart)',
    header: ['reason', 'requests'],
    rows: sortedEntries(result.rejected).map(([reason, n]) => [reason, String(n)]),
  };
}

/** Final states down, kinds across, so "declined → CANCELLED: card declined by issuer" reads off one row. */
function finalStatesTable(outcome: Outcome): Table {
  const byKind = outcome.finalStatesByKind ?? {};
  const kinds = ORDER_KINDS.filter((kind) => byKind[kind] !== undefined);
  return {
    title: `Final states of the accepted orders (orders database, after waiting ${(outcome.waitedMs / 1000).toFixed(1)} s)`,
    header: ['state', ...kinds, 'total'],
    rows: sortedEntries(outcome.finalStates).map(([state, n]) => [
      state,
      ...kinds.map((kind) => String(byKind[kind]?.[state] ?? 0)),
      String(n),
    ]),
  };
}

function latencyTable(outcome: Outcome): Table {
  const ms = (value: number) => `${Math.round(value)} ms`;
  const row = (label: string, latency: LatencySummary) =>
    latency.count === 0
      ? []
      : [[label, String(latency.count), ms(latency.p50), ms(latency.p95), ms(latency.p99), ms(latency.max)]];
  return {
    title: 'End-to-end latency: order accepted → decided (both timestamps from the orders database)',
    header: ['decision', 'orders', 'p50', 'p95', 'p99', 'max'],
    rows: [...row('CONFIRMED', outcome.latencyMs), ...row('CANCELLED', outcome.cancelLatencyMs)],
  };
}

function eventsTable(outcome: Outcome): Table {
  const { published, pending, failed } = outcome.events;
  return {
    title: "Events of the run, per service outbox (each service's database)",
    header: ['outbox', 'published', 'pending', 'failed'],
    rows: Object.keys(published).map((service) => [
      service,
      String(published[service] ?? 0),
      String(pending[service] ?? 0),
      String(failed[service] ?? 0),
    ]),
  };
}

function eventTypesTable(outcome: Outcome): Table {
  return {
    title: 'Published events, by type',
    header: ['event type', 'published'],
    rows: sortedEntries(outcome.events.publishedByType).map(([type, n]) => [type, String(n)]),
  };
}

function consumersTable(outcome: Outcome): Table {
  const duplicates = outcome.duplicatesSkipped;
  const consumers = [...new Set([...Object.keys(outcome.consumed), ...Object.keys(duplicates ?? {})])].sort();
  return {
    title: 'Consumers: events applied (processed_events) and duplicates skipped (/metrics)',
    header: ['consumer', 'applied', 'duplicates skipped'],
    rows: consumers.map((consumer) => [
      consumer,
      String(outcome.consumed[consumer] ?? 0),
      duplicates ? String(duplicates[consumer] ?? 0) : 'n/a',
    ]),
  };
}

/**
 * What the tables cannot say on their own. The scheduler catches up after a stall, so a rate well
 * below the one asked means every one of the `concurrency` slots was waiting on a slow answer.
 */
function notes(result: LoadResult, outcome: Outcome): string[] {
  const lines = [...outcome.warnings];
  if (result.shedAnswers > 0) {
    lines.push(
      `the API shed ${result.shedAnswers} answer(s) with 503 overloaded (nothing written; retried after ` +
        `Retry-After); ${result.shed} order(s) were still shed at their last attempt`,
    );
  }
  if (result.targetRate !== undefined && result.achievedRate < 0.9 * result.targetRate) {
    lines.push(
      `the API did not keep up with ${result.targetRate}/s: all ${result.concurrency} requests in flight were ` +
        'waiting for answers; raise --concurrency to push harder, or lower --rate',
    );
  }
  if (outcome.pending.length > 0) {
    const shown = outcome.pending.slice(0, 5).join(', ');
    lines.push(`${outcome.pending.length} order(s) still PENDING, e.g. ${shown}`);
  }
  return lines.length > 0 ? [lines.map((line) => `! ${line}`).join('\n')] : [];
}

/** Largest first, then by name, so the tables read the same from run to run. */
function sortedEntries(record: Record<string, number>): [string, number][] {
  return Object.entries(record).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
}
