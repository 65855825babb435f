import type { OrderView, ServiceName } from '../shared/apiTypes.ts';
import type { OrderTimeline, TimelineEvent, TimelineStep } from '../shared/timeline.ts';

// The pure half of an order's timeline: from the rows of the three outboxes and inboxes and the
// spans of the order's trace, each event's path (committed → claimed → published → applied) with
// the delay of every hop. Reading those rows and spans is orderTimelineView.ts's job.

/** An outbox row of the order's aggregate, times in epoch milliseconds (microseconds kept). */
export type OutboxRecord = {
  service: ServiceName;
  id: string;
  eventType: string;
  status: TimelineEvent['status'];
  attempts: number;
  lastError: string | null;
  createdMs: number;
  publishedMs: number | null;
};

/** A processed_events row: `consumer` (its group id) applied `eventId` in `service`'s database. */
export type InboxRecord = { service: ServiceName; consumer: string; eventId: string; processedMs: number };

/** The Kafka spans of the trace that name an event (docs/tracing.md, "The spans"). */
export type EventSpan = {
  kind: 'publish' | 'process';
  /** The process that made it (OTEL_SERVICE_NAME: `relay-orders`, `inventory`, ...). */
  service: string;
  name: string;
  eventId: string;
  startMs: number;
  durationMs: number;
  /** A process span's `messaging.consumer.group.name`: the consumer of processed_events. */
  consumerGroup?: string;
  /** A process span's `outbox.consumer.result`: applied, duplicate or ignored. */
  result?: string;
  error: boolean;
};

export type TimelineInput = {
  orderId: string;
  status: OrderView['status'];
  traceUrl?: string;
  outbox: OutboxRecord[];
  inbox: InboxRecord[];
  trace: { available: true; spans: EventSpan[] } | { available: false; reason: string; sampledOut?: true };
};

/**
 * Who applies each event type (apps/inventory/src/handlers.ts, apps/billing/src/handlers.ts,
 * apps/orders/src/saga/replyHandlers.ts). An expected consumer with no processed_events row yet is
 * shown as pending; ORDER_CONFIRMED is received by inventory and billing and ignored, so nobody
 * records it.
 */
const APPLIED_BY: Record<string, ServiceName[]> = {
  ORDER_CREATED: ['inventory', 'billing'],
  ORDER_CANCELLED: ['inventory', 'billing'],
  ORDER_CONFIRMED: [],
  STOCK_RESERVED: ['orders'],
  STOCK_REJECTED: ['orders'],
  STOCK_RELEASED: ['orders'],
  PAYMENT_AUTHORIZED: ['orders'],
  PAYMENT_DECLINED: ['orders'],
  PAYMENT_VOIDED: ['orders'],
};

const DECISIONS = new Set(['ORDER_CONFIRMED', 'ORDER_CANCELLED']);

/**
 * A reply and its cause's processed_events row share a transaction's now(). The outbox keeps it to
 * the millisecond (created_at is timestamptz(3), migration 005: the CDC relay's ce_time), rounded,
 * so the two differ by up to half a millisecond, plus float noise.
 */
const SAME_TRANSACTION_MS = 0.501;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const round = (ms: number) => Math.round(ms * 100) / 100;

/**
 * The delay of a hop. The database times are transaction start times (`now()`), and the relay marks
 * a row published only after Kafka acknowledged it, so a quick consumer can record an event a
 * fraction of a millisecond "before" its publication: that hop took no time, and shows as 0.
 */
const delay = (from: number | null, to: number | null) =>
  from === null || to === null ? null : round(Math.max(0, to - from));

export function assembleTimeline(input: TimelineInput): OrderTimeline {
  const spans = input.trace.available ? input.trace.spans : [];
  const trace: TraceState = input.trace.available
    ? 'read'
    : input.trace.sampledOut
      ? 'sampled out'
      : 'unread';
  const appliedTimes = new Map<string, number>(); // `${service} ${eventId}` → processedMs
  for (const row of input.inbox) appliedTimes.set(`${row.service} ${row.eventId}`, row.processedMs);
  const causeOf = causeFinder(input);
  const events = input.outbox.map((row) => {
    const cause = causeOf(row);
    const causeApplied = cause ? (appliedTimes.get(`${row.service} ${cause.id}`) ?? null) : null;
    return { row, cause, steps: stepsOf(row, causeApplied, input.inbox, spans, trace) };
  });
  const timeline: TimelineEvent[] = inCausalOrder(events).map(({ row, cause, steps }) => ({
    eventId: row.id,
    eventType: row.eventType,
    outbox: row.service,
    status: row.status,
    causedBy: cause?.id ?? null,
    steps,
    appliedBy: appliedByOf(row, input.inbox),
  }));
  return {
    orderId: input.orderId,
    status: input.status,
    ...(input.traceUrl ? { traceUrl: input.traceUrl } : {}),
    trace: input.trace.available ? { available: true, spans: input.trace.spans.length } : input.trace,
    events: timeline,
    slowest: slowestHop(timeline),
    decision: decisionOf(input.outbox),
  };
}

/**
 * The event its service applied in the transaction that wrote this one: both rows carry that
 * transaction's now(). Nothing matches for the order itself (the POST) or a saga timeout's cancel.
 */
function causeFinder(input: TimelineInput): (event: OutboxRecord) => OutboxRecord | undefined {
  const byId = new Map(input.outbox.map((row) => [row.id, row]));
  return (event) => {
    let cause: OutboxRecord | undefined;
    for (const applied of input.inbox) {
      if (applied.service !== event.service) continue;
      if (Math.abs(applied.processedMs - event.createdMs) > SAME_TRANSACTION_MS) continue;
      const row = byId.get(applied.eventId);
      if (!row || row.id === event.id) continue;
      // One transaction may apply several replies of the order (a chunk): the later one decided.
      if (!cause || row.createdMs > cause.createdMs) cause = row;
    }
    return cause;
  };
}

/** Time first; a reply written in its cause's transaction shares its time, and comes after it. */
function inCausalOrder<T extends { row: OutboxRecord; cause: OutboxRecord | undefined }>(events: T[]): T[] {
  const causes = new Map(events.map((event) => [event.row.id, event.cause?.id]));
  const depth = (id: string): number => {
    let hops = 0;
    for (let at = causes.get(id); at !== undefined && hops < causes.size; at = causes.get(at)) hops++;
    return hops;
  };
  return [...events].sort((a, b) => a.row.createdMs - b.row.createdMs || depth(a.row.id) - depth(b.row.id));
}

function slowestHop(timeline: TimelineEvent[]): OrderTimeline['slowest'] {
  let slowest: OrderTimeline['slowest'] = null;
  for (const event of timeline) {
    for (const [step, { delayMs }] of event.steps.entries()) {
      if (delayMs !== null && delayMs > (slowest?.delayMs ?? 0)) {
        slowest = { eventId: event.eventId, step, delayMs };
      }
    }
  }
  return slowest;
}

function decisionOf(outbox: OutboxRecord[]): OrderTimeline['decision'] {
  const created = outbox.find((row) => row.eventType === 'ORDER_CREATED');
  const decided = outbox.find((row) => row.service === 'orders' && DECISIONS.has(row.eventType));
  if (!decided) return null;
  return {
    eventType: decided.eventType,
    at: new Date(decided.createdMs).toISOString(),
    afterMs: created ? round(decided.createdMs - created.createdMs) : 0,
  };
}

/** The expected consumers of the type, and any other that recorded it. */
function appliedByOf(row: OutboxRecord, inbox: InboxRecord[]): ServiceName[] {
  const services = new Set(APPLIED_BY[row.eventType] ?? []);
  for (const applied of inbox) if (applied.eventId === row.id) services.add(applied.service);
  return [...services];
}

function stepsOf(
  row: OutboxRecord,
  causeApplied: number | null,
  inbox: InboxRecord[],
  spans: EventSpan[],
  trace: TraceState,
): TimelineStep[] {
  const relay = `relay-${row.service}`;
  const publishes = spans
    .filter((span) => span.kind === 'publish' && span.eventId === row.id)
    .sort((a, b) => a.startMs - b.startMs);
  // The first publish span starts right after the claim; the one that succeeded is the publish.
  const claimedMs = publishes[0]?.startMs ?? null;
  const acknowledged = publishes.filter((span) => !span.error).at(-1) ?? publishes.at(-1);
  const notPublished = notPublishedNote(row);

  const committed: TimelineStep = {
    kind: 'committed',
    actor: row.service,
    at: iso(row.createdMs),
    delayMs: delay(causeApplied, row.createdMs),
    source: 'database',
  };
  const claimed: TimelineStep = {
    kind: 'claimed',
    actor: relay,
    at: iso(claimedMs),
    delayMs: delay(row.createdMs, claimedMs),
    source: claimedMs === null ? null : 'trace',
    ...(claimedMs === null ? { note: notPublished ?? claimNotRecorded(trace) } : {}),
  };
  const published: TimelineStep = {
    kind: 'published',
    actor: relay,
    at: iso(row.publishedMs),
    delayMs: delay(claimedMs ?? row.createdMs, row.publishedMs),
    source: row.publishedMs === null ? null : 'database',
    ...(acknowledged ? { span: spanOf(acknowledged) } : {}),
    ...(row.publishedMs === null && notPublished ? { note: notPublished } : {}),
  };
  const previous = row.publishedMs ?? claimedMs ?? row.createdMs;
  const applied = appliedByOf(row, inbox).map((service) => appliedStep(row, service, previous, inbox, spans));
  return [committed, claimed, published, ...applied];
}

/** One consumer's apply of the event: its processed_events row, and its process span if traced. */
function appliedStep(
  row: OutboxRecord,
  service: ServiceName,
  previous: number,
  inbox: InboxRecord[],
  spans: EventSpan[],
): TimelineStep {
  const record = inbox.find((applied) => applied.service === service && applied.eventId === row.id);
  const process = spans
    .filter(
      (span) =>
        span.kind === 'process' &&
        span.eventId === row.id &&
        (record ? span.consumerGroup === record.consumer : span.service === service),
    )
    .sort((a, b) => Number(b.result === 'applied') - Number(a.result === 'applied'))[0];
  const at = record?.processedMs ?? null;
  return {
    kind: 'applied',
    actor: service,
    at: iso(at),
    delayMs: delay(previous, at),
    source: at === null ? null : 'database',
    ...(process ? { span: spanOf(process) } : {}),
    ...(at === null
      ? { note: row.publishedMs === null ? 'waits for the event to be published' : 'not applied yet' }
      : {}),
  };
}

/** Whether the order's spans were read, could not be, or do not exist (the order was not traced). */
type TraceState = 'read' | 'unread' | 'sampled out';

/** A published event whose claim has no span: the outbox row forgets its lease once published. */
function claimNotRecorded(trace: TraceState): string {
  if (trace === 'read') return 'the trace has no publish span for it (yet)';
  if (trace === 'sampled out') return 'the outbox keeps no claim time, and this order was not traced';
  return 'the outbox keeps no claim time: the trace has it';
}

function notPublishedNote(row: OutboxRecord): string | undefined {
  if (row.status === 'pending') {
    return row.attempts > 0 ? `pending, retried ${row.attempts} times` : 'pending: waiting for a relay';
  }
  if (row.status === 'in_flight') return 'in flight: a relay holds its lease';
  if (row.status === 'failed') return `dead-lettered after ${row.attempts} attempts: ${row.lastError ?? ''}`;
  return undefined;
}

function spanOf(span: EventSpan): NonNullable<TimelineStep['span']> {
  return { name: `${span.service}: ${span.name}`, durationMs: round(span.durationMs) };
}
