import { describe, expect, it } from 'vitest';
import {
  assembleTimeline,
  type EventSpan,
  type InboxRecord,
  type OutboxRecord,
  type TimelineInput,
} from '../src/readModels/orderTimelineHops.ts';

const ORDER = '3f0c9a52-5a4e-4b8e-9d7e-0b7c2f4e1a01';
const CREATED = 'e0000000-0000-4000-8000-000000000001';
const RESERVED = 'e0000000-0000-4000-8000-000000000002';
const AUTHORIZED = 'e0000000-0000-4000-8000-000000000003';
const CONFIRMED = 'e0000000-0000-4000-8000-000000000004';

/** Milliseconds after the order's transaction began. */
const T0 = Date.parse('2026-11-24T10:00:00.000Z');
const at = (ms: number) => T0 + ms;

function row(
  service: OutboxRecord['service'],
  id: string,
  eventType: string,
  created: number,
  published: number | null,
): OutboxRecord {
  return {
    service,
    id,
    eventType,
    status: published === null ? 'pending' : 'published',
    attempts: 0,
    lastError: null,
    createdMs: at(created),
    publishedMs: published === null ? null : at(published),
  };
}

const applied = (service: InboxRecord['service'], eventId: string, processed: number): InboxRecord => ({
  service,
  consumer: `t1-${service}`,
  eventId,
  processedMs: at(processed),
});

const publish = (service: string, eventId: string, start: number, duration: number): EventSpan => ({
  kind: 'publish',
  service,
  name: `publish ${service.replace('relay-', '')}.events`,
  eventId,
  startMs: at(start),
  durationMs: duration,
  error: false,
});

const processing = (service: string, eventId: string, start: number, duration: number): EventSpan => ({
  kind: 'process',
  service,
  name: 'process order.events',
  eventId,
  startMs: at(start),
  durationMs: duration,
  consumerGroup: `t1-${service}`,
  result: 'applied',
  error: false,
});

/** A confirmed order: created at 0, inventory answers first, billing second, orders confirms at 40. */
const confirmed: TimelineInput = {
  orderId: ORDER,
  status: 'CONFIRMED',
  traceUrl: 'http://zipkin/traces/abc',
  outbox: [
    row('orders', CREATED, 'ORDER_CREATED', 0, 12),
    row('orders', CONFIRMED, 'ORDER_CONFIRMED', 40, 45),
    row('inventory', RESERVED, 'STOCK_RESERVED', 15, 22),
    row('billing', AUTHORIZED, 'PAYMENT_AUTHORIZED', 18, 30),
  ],
  inbox: [
    applied('inventory', CREATED, 15),
    applied('billing', CREATED, 18),
    applied('orders', RESERVED, 25),
    applied('orders', AUTHORIZED, 40),
  ],
  trace: {
    available: true,
    spans: [
      publish('relay-orders', CREATED, 3, 8),
      processing('inventory', CREATED, 13, 4),
      processing('billing', CREATED, 14, 6),
      publish('relay-inventory', RESERVED, 19, 2),
      publish('relay-billing', AUTHORIZED, 20, 9),
      processing('orders', RESERVED, 23, 3),
      processing('orders', AUTHORIZED, 32, 9),
      publish('relay-orders', CONFIRMED, 42, 2),
    ],
  },
};

const stepsOf = (timeline: ReturnType<typeof assembleTimeline>, eventId: string) =>
  timeline.events
    .find((event) => event.eventId === eventId)
    ?.steps.map(({ kind, actor, delayMs, source }) => ({ kind, actor, delayMs, source }));

describe("an order's timeline", () => {
  it('lists the events in causal order, each reply after the event whose handling wrote it', () => {
    const timeline = assembleTimeline(confirmed);
    expect(timeline.events.map((event) => [event.eventType, event.causedBy])).toEqual([
      ['ORDER_CREATED', null],
      ['STOCK_RESERVED', CREATED],
      ['PAYMENT_AUTHORIZED', CREATED],
      // Written in the transaction that applied the second reply.
      ['ORDER_CONFIRMED', AUTHORIZED],
    ]);
    expect(timeline.decision).toEqual({
      eventType: 'ORDER_CONFIRMED',
      at: new Date(at(40)).toISOString(),
      afterMs: 40,
    });
  });

  it('measures each hop from the one before: committed → claimed → published → applied', () => {
    const timeline = assembleTimeline(confirmed);
    expect(stepsOf(timeline, CREATED)).toEqual([
      { kind: 'committed', actor: 'orders', delayMs: null, source: 'database' },
      { kind: 'claimed', actor: 'relay-orders', delayMs: 3, source: 'trace' },
      { kind: 'published', actor: 'relay-orders', delayMs: 9, source: 'database' },
      { kind: 'applied', actor: 'inventory', delayMs: 3, source: 'database' },
      { kind: 'applied', actor: 'billing', delayMs: 6, source: 'database' },
    ]);
    // A reply is committed in the same transaction that applied its cause: no time between them.
    expect(stepsOf(timeline, RESERVED)?.[0]).toEqual({
      kind: 'committed',
      actor: 'inventory',
      delayMs: 0,
      source: 'database',
    });
    // Nobody applies ORDER_CONFIRMED: inventory and billing receive it and ignore it.
    expect(stepsOf(timeline, CONFIRMED)?.map((step) => step.kind)).toEqual([
      'committed',
      'claimed',
      'published',
    ]);
  });

  it("names each hop's span from the trace", () => {
    const timeline = assembleTimeline(confirmed);
    const [, , published, inventory] = timeline.events[0]?.steps ?? [];
    expect(published?.span).toEqual({ name: 'relay-orders: publish orders.events', durationMs: 8 });
    expect(inventory?.span).toEqual({ name: 'inventory: process order.events', durationMs: 4 });
    expect(timeline.trace).toEqual({ available: true, spans: 8 });
    expect(timeline.traceUrl).toBe('http://zipkin/traces/abc');
  });

  it('points at the slowest hop: here billing waiting for its relay', () => {
    const timeline = assembleTimeline(confirmed);
    // PAYMENT_AUTHORIZED committed at 18, published at 30 (claimed at 20): 10 ms, the largest hop.
    expect(timeline.slowest).toEqual({ eventId: AUTHORIZED, step: 2, delayMs: 10 });
  });

  it('without a trace, keeps the database times and says the claim is not recorded', () => {
    const timeline = assembleTimeline({ ...confirmed, trace: { available: false, reason: 'no Zipkin' } });
    expect(timeline.trace).toEqual({ available: false, reason: 'no Zipkin' });
    const [committed, claimed, published, inventory] = timeline.events[0]?.steps ?? [];
    expect(committed?.at).toBe(new Date(at(0)).toISOString());
    expect(claimed).toMatchObject({ at: null, delayMs: null, source: null });
    expect(claimed?.note).toContain('the outbox keeps no claim time');
    // Published is then measured from the commit.
    expect(published).toMatchObject({ delayMs: 12, source: 'database' });
    expect(published?.span).toBeUndefined();
    expect(inventory).toMatchObject({ delayMs: 3, source: 'database' });
  });

  it('shows an event not yet published as pending, and its consumers as waiting', () => {
    const timeline = assembleTimeline({
      orderId: ORDER,
      status: 'PENDING',
      outbox: [row('orders', CREATED, 'ORDER_CREATED', 0, null)],
      inbox: [],
      trace: { available: true, spans: [] },
    });
    const [event] = timeline.events;
    expect(event?.status).toBe('pending');
    expect(
      event?.steps.map(({ kind, actor, at, delayMs, note }) => ({ kind, actor, at, delayMs, note })),
    ).toEqual([
      {
        kind: 'committed',
        actor: 'orders',
        at: new Date(at(0)).toISOString(),
        delayMs: null,
        note: undefined,
      },
      {
        kind: 'claimed',
        actor: 'relay-orders',
        at: null,
        delayMs: null,
        note: 'pending: waiting for a relay',
      },
      {
        kind: 'published',
        actor: 'relay-orders',
        at: null,
        delayMs: null,
        note: 'pending: waiting for a relay',
      },
      {
        kind: 'applied',
        actor: 'inventory',
        at: null,
        delayMs: null,
        note: 'waits for the event to be published',
      },
      {
        kind: 'applied',
        actor: 'billing',
        at: null,
        delayMs: null,
        note: 'waits for the event to be published',
      },
    ]);
    expect(timeline.slowest).toBeNull();
    expect(timeline.decision).toBeNull();
  });

  it('shows a published event a consumer has not applied yet as pending for that consumer only', () => {
    const timeline = assembleTimeline({
      ...confirmed,
      status: 'PENDING',
      outbox: [row('orders', CREATED, 'ORDER_CREATED', 0, 12)],
      inbox: [applied('billing', CREATED, 18)],
    });
    const [, , , inventory, billing] = timeline.events[0]?.steps ?? [];
    expect(inventory).toMatchObject({ actor: 'inventory', at: null, note: 'not applied yet' });
    expect(billing).toMatchObject({ actor: 'billing', delayMs: 6 });
  });

  it('says why a dead-lettered event never left its outbox', () => {
    const poisoned: OutboxRecord = {
      ...row('orders', CREATED, 'ORDER_CREATED', 0, null),
      status: 'failed',
      attempts: 1,
      lastError: 'MESSAGE_TOO_LARGE',
    };
    const timeline = assembleTimeline({ ...confirmed, outbox: [poisoned], inbox: [] });
    expect(timeline.events[0]?.steps[2]?.note).toBe('dead-lettered after 1 attempts: MESSAGE_TOO_LARGE');
  });

  it('never shows a negative hop when a consumer applied the event before the relay marked it', () => {
    // Kafka delivered the event before the relay's mark committed: the consumer's time is earlier.
    const timeline = assembleTimeline({
      ...confirmed,
      outbox: [row('orders', CREATED, 'ORDER_CREATED', 0, 12)],
      inbox: [applied('inventory', CREATED, 11.5), applied('billing', CREATED, 14)],
    });
    const [, , , inventory, billing] = timeline.events[0]?.steps ?? [];
    expect(inventory?.delayMs).toBe(0);
    expect(billing?.delayMs).toBe(2);
  });

  it('takes the later reply as the cause when one transaction applied both', () => {
    // Both replies arrived in one chunk: orders applied them in one transaction at 30.
    const timeline = assembleTimeline({
      ...confirmed,
      outbox: [
        row('orders', CREATED, 'ORDER_CREATED', 0, 12),
        row('inventory', RESERVED, 'STOCK_RESERVED', 15, 22),
        row('billing', AUTHORIZED, 'PAYMENT_AUTHORIZED', 18, 26),
        row('orders', CONFIRMED, 'ORDER_CONFIRMED', 30, 33),
      ],
      inbox: [
        applied('inventory', CREATED, 15),
        applied('billing', CREATED, 18),
        applied('orders', RESERVED, 30),
        applied('orders', AUTHORIZED, 30),
      ],
    });
    expect(timeline.events.at(-1)).toMatchObject({ eventType: 'ORDER_CONFIRMED', causedBy: AUTHORIZED });
    expect(timeline.events.at(-1)?.steps[0]?.delayMs).toBe(0);
  });

  it("gives a saga timeout's cancel no cause: no consumer's transaction wrote it", () => {
    const CANCELLED = 'e0000000-0000-4000-8000-000000000005';
    const timeline = assembleTimeline({
      ...confirmed,
      status: 'CANCELLED',
      outbox: [
        row('orders', CREATED, 'ORDER_CREATED', 0, 12),
        row('inventory', RESERVED, 'STOCK_RESERVED', 15, 22),
        row('orders', CANCELLED, 'ORDER_CANCELLED', 300_000, 300_004),
      ],
      inbox: [applied('inventory', CREATED, 15), applied('orders', RESERVED, 25)],
      trace: { available: false, reason: 'no Zipkin' },
    });
    expect(timeline.events.map((event) => [event.eventType, event.causedBy])).toEqual([
      ['ORDER_CREATED', null],
      ['STOCK_RESERVED', CREATED],
      ['ORDER_CANCELLED', null],
    ]);
    expect(timeline.events.at(-1)?.steps[0]?.delayMs).toBeNull();
    expect(timeline.decision).toMatchObject({ eventType: 'ORDER_CANCELLED', afterMs: 300_000 });
  });
});
