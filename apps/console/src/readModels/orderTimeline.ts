import { HttpProblem, notFound } from '@outbox/runtime/problem';
import { parseTraceparent } from '@outbox/runtime/traceparent';
import { errorMessage, fetchWithTimeout, type Service } from '../services.ts';
import type { OrderView } from '../shared/apiTypes.ts';
import type { OrderTimeline } from '../shared/timeline.ts';
import {
  assembleTimeline,
  type EventSpan,
  type InboxRecord,
  type OutboxRecord,
  type TimelineInput,
} from './orderTimelineHops.ts';

// Reads what an order's timeline is made of: the order from the orders API (as ordersView does),
// its events from the three outboxes and their consumers' processed_events (the console reads the
// service databases directly, as outboxView does), and, when Zipkin is there, the order's trace.

/** An order's saga writes a handful of events to each outbox; a bound all the same. */
const ORDER_EVENTS = 100;

/**
 * Every event of the saga is keyed by the order id (docs/events.md), whatever its outbox. Read by
 * outbox_aggregate_id_idx (packages/outbox/migrations/004_outbox_aggregate_reads.sql), published
 * rows included: a few index entries, not the day's outbox.
 */
export const orderEventsSql = `
  select id, event_type, status, attempts, last_error,
         extract(epoch from created_at)::float8 * 1000 as created_ms,
         extract(epoch from published_at)::float8 * 1000 as published_ms,
         headers->>'traceparent' as traceparent
    from outbox
   where aggregate_id = $1::text
   order by seq
   limit $2::int`;

/**
 * The consumers' records of those events. An event is applied after its order was created, so the
 * BRIN index on processed_at skips the older rows; the minute of slack covers clocks of database
 * servers that disagree a little.
 */
const inboxSql = `
  select consumer, event_id::text as event_id,
         extract(epoch from processed_at)::float8 * 1000 as processed_ms
    from processed_events
   where event_id = any($1::uuid[])
     and processed_at >= to_timestamp($2::float8 / 1000) - interval '1 minute'`;

type OutboxRow = {
  id: string;
  event_type: string;
  status: OutboxRecord['status'];
  attempts: number;
  last_error: string | null;
  created_ms: number;
  published_ms: number | null;
  traceparent: string | null;
};

/** A span as Zipkin's API v2 returns it (GET /api/v2/trace/{traceId}); times in microseconds. */
type ZipkinSpan = {
  name?: string;
  kind?: string;
  timestamp?: number;
  duration?: number;
  localEndpoint?: { serviceName?: string };
  tags?: Record<string, string>;
};

export type TimelineSources = {
  ordersUrl: string;
  services: Service[];
  zipkinUrl: string | undefined;
  traceUrlTemplate: string | undefined;
};

export async function orderTimelineView(orderId: string, sources: TimelineSources): Promise<OrderTimeline> {
  const order = await readOrder(sources.ordersUrl, orderId);
  const outboxes = await Promise.all(
    sources.services.map(async (service) => {
      const { rows } = await service.pool.query<OutboxRow>(orderEventsSql, [orderId, ORDER_EVENTS]);
      return rows.map((row) => ({ service: service.name, row }));
    }),
  );
  const outbox: OutboxRecord[] = outboxes.flat().map(({ service, row }) => ({
    service,
    id: row.id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    lastError: row.last_error,
    createdMs: row.created_ms,
    publishedMs: row.published_ms,
  }));
  const ids = outbox.map((row) => row.id);
  const since = Math.min(Date.parse(order.createdAt), ...outbox.map((row) => row.createdMs));
  const inboxes = await Promise.all(
    sources.services.map(async (service): Promise<InboxRecord[]> => {
      const { rows } = await service.pool.query<{ consumer: string; event_id: string; processed_ms: number }>(
        inboxSql,
        [ids, since],
      );
      return rows.map((row) => ({
        service: service.name,
        consumer: row.consumer,
        eventId: row.event_id,
        processedMs: row.processed_ms,
      }));
    }),
  );

  const stored = parseTraceparent(
    outboxes.flat().find(({ service, row }) => service === 'orders' && row.event_type === 'ORDER_CREATED')
      ?.row.traceparent ?? undefined,
  );
  // The sampled flag is the record of the head-sampling decision: an order sampled out has no
  // trace anywhere, so there is nothing to ask Zipkin for or to link to.
  const trace = stored?.sampled === false ? SAMPLED_OUT : await readTrace(sources.zipkinUrl, stored?.traceId);
  // With Zipkin to ask, a link only to a trace it holds: while it is down (or after a restart
  // emptied it), the link would open an error page. Without (another backend's template), as is.
  const linkable = stored?.sampled && (trace.available || !sources.zipkinUrl);
  const input: TimelineInput = {
    orderId,
    status: order.status,
    outbox,
    inbox: inboxes.flat(),
    trace,
    ...(stored && sources.traceUrlTemplate && linkable
      ? { traceUrl: sources.traceUrlTemplate.replace('{traceId}', stored.traceId) }
      : {}),
  };
  return assembleTimeline(input);
}

async function readOrder(ordersUrl: string, orderId: string): Promise<OrderView> {
  let res: Response;
  try {
    res = await fetchWithTimeout(`${ordersUrl}/orders/${orderId}`);
  } catch (err) {
    throw new HttpProblem(502, 'Orders API unreachable', `Cannot read the order: ${errorMessage(err)}`);
  }
  if (res.status === 404) throw notFound(`No order has id ${orderId}.`);
  if (!res.ok)
    throw new HttpProblem(502, 'Orders API error', `GET /orders/${orderId} answered ${res.status}.`);
  return (await res.json()) as OrderView;
}

const SAMPLED_OUT: TimelineInput['trace'] = {
  available: false,
  sampledOut: true,
  reason:
    "sampled out under load: each process records at most TRACING_MAX_TRACES_PER_SECOND new traces a second, and this order's traceparent says it was not one of them. The times come from the databases alone.",
};

/** The order's spans from Zipkin, or why there are none: the timeline then shows the databases' times. */
async function readTrace(
  zipkinUrl: string | undefined,
  traceId: string | undefined,
): Promise<TimelineInput['trace']> {
  if (!zipkinUrl) {
    return {
      available: false,
      reason: 'No Zipkin to read the trace from (ZIPKIN_URL): the times come from the databases alone.',
    };
  }
  if (!traceId) {
    return {
      available: false,
      reason:
        "The order's ORDER_CREATED row carries no trace context: tracing was off when it was written, or the relay's retention deleted the row.",
    };
  }
  try {
    const res = await fetchWithTimeout(`${zipkinUrl.replace(/\/+$/, '')}/api/v2/trace/${traceId}`);
    if (res.status === 404) {
      return {
        available: false,
        reason: `Zipkin has no trace ${traceId}: its spans arrive within a second, and Zipkin keeps only the newest ones in memory.`,
      };
    }
    if (!res.ok) throw new Error(`GET /api/v2/trace/${traceId} answered ${res.status}`);
    return { available: true, spans: eventSpans((await res.json()) as ZipkinSpan[]) };
  } catch (err) {
    return {
      available: false,
      reason: `Zipkin did not answer (${errorMessage(err)}); the demo restarts it when it dies, without the traces it held.`,
    };
  }
}

/** The relays' publish spans and the consumers' process spans; the HTTP and pg spans name no event. */
function eventSpans(spans: ZipkinSpan[]): EventSpan[] {
  return spans.flatMap((span): EventSpan[] => {
    const tags = span.tags ?? {};
    const eventId = tags['cloudevents.event_id'];
    const kind = span.kind === 'PRODUCER' ? 'publish' : span.kind === 'CONSUMER' ? 'process' : undefined;
    if (!eventId || !kind || span.timestamp === undefined) return [];
    return [
      {
        kind,
        service: span.localEndpoint?.serviceName ?? 'unknown',
        name: span.name ?? kind,
        eventId,
        startMs: span.timestamp / 1000,
        durationMs: (span.duration ?? 0) / 1000,
        ...(tags['messaging.consumer.group.name']
          ? { consumerGroup: tags['messaging.consumer.group.name'] }
          : {}),
        ...(tags['outbox.consumer.result'] ? { result: tags['outbox.consumer.result'] } : {}),
        error: tags.error !== undefined || tags['otel.status_code'] === 'ERROR',
      },
    ];
  });
}
