// The JSON of GET /api/orders/:id/timeline: one order's events across the system, hop by hop.
// Types only, like api.ts: the browser code imports them too.

import type { OrderView, OutboxRowView, ServiceName } from './apiTypes.ts';

/**
 * One moment in an event's path: committed to its outbox, claimed and published by its relay,
 * applied by a consumer. `at` is null while it has not happened (or nothing recorded it).
 */
export type TimelineStep = {
  kind: 'committed' | 'claimed' | 'published' | 'applied';
  /** Who did it: the service that wrote the event or applied it, or the relay (`relay-orders`). */
  actor: string;
  at: string | null;
  /** Milliseconds since the step before it (the previous one of this event that is known, or for a
   *  reply, its cause being applied); null when either end is unknown. */
  delayMs: number | null;
  /** Where `at` comes from: a table's timestamp, or a span of the order's trace. */
  source: 'database' | 'trace' | null;
  /** The span that covers this hop, when the trace has it (e.g. `relay-orders: publish order.events`). */
  span?: { name: string; durationMs: number };
  /** Why `at` is missing (pending, dead-lettered, not recorded without a trace). */
  note?: string;
};

export type TimelineEvent = {
  eventId: string;
  eventType: string;
  /** The service whose outbox holds it. */
  outbox: ServiceName;
  status: OutboxRowView['status'];
  /** The event whose handling wrote this one in the same transaction; null for the order itself
   *  (or a saga timeout's cancel). */
  causedBy: string | null;
  steps: TimelineStep[];
  /** Who applies this type: none for ORDER_CONFIRMED, which inventory and billing receive and ignore. */
  appliedBy: ServiceName[];
};

/** GET /api/orders/:id/timeline: where the time went for one order, event by event. */
export type OrderTimeline = {
  orderId: string;
  status: OrderView['status'];
  traceUrl?: string;
  /**
   * Whether the trace's spans were read (they add the claim times and each hop's span); if not,
   * why, and `sampledOut` when the order was not traced at all (its traceparent's sampled flag is 0).
   */
  trace: { available: true; spans: number } | { available: false; reason: string; sampledOut?: true };
  /** In causal order: each event after the one whose handling wrote it. */
  events: TimelineEvent[];
  /** The hop that took longest, to show where the time went. */
  slowest: { eventId: string; step: number; delayMs: number } | null;
  /** From ORDER_CREATED's commit to the commit of the decision (ORDER_CONFIRMED / ORDER_CANCELLED). */
  decision: { eventType: string; at: string; afterMs: number } | null;
};
