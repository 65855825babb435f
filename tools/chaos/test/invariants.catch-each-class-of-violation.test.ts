// The checker's own logic on small hand-made snapshots: a consistent one passes every invariant,
// and each kind of damage a real bug would do fails the invariant meant to catch it.
import { describe, expect, it } from 'vitest';
import { checkInvariants, type InvariantResult } from '../src/invariants/index.ts';
import type { OutboxRow, Snapshot } from '../src/invariants/snapshot.ts';
import type { TopicMessage } from '../src/topics.ts';

const ORDER = '00000000-0000-4000-8000-000000000001';
const ids = {
  created: 'e-created',
  reserved: 'e-reserved',
  authorized: 'e-authorized',
  confirmed: 'e-confirmed',
};
const topics = {
  events: { orders: 'p.order.events', inventory: 'p.reservation.events', billing: 'p.payment.events' },
  deadLetters: ['p.order.events.dlt', 'p.reservation.events.dlt', 'p.payment.events.dlt'],
};

const row = (id: string, seq: number, type: string, aggregateType: string): OutboxRow => ({
  id,
  seq,
  aggregate_type: aggregateType,
  aggregate_id: ORDER,
  event_type: type,
  status: 'published',
  last_error: null,
});
const message = (topic: string, offset: number, id: string, type: string): TopicMessage => ({
  topic,
  partition: 0,
  offset,
  key: ORDER,
  eventId: id,
  type,
  deadLetteredBy: undefined,
});

/** One confirmed order for 2 × KB-101, every event published once and applied once. */
function consistent(): Snapshot {
  return {
    writeMode: 'outbox',
    relayMode: 'polling',
    acknowledged: [ORDER],
    initialStock: new Map([['KB-101', 100]]),
    orders: [{ id: ORDER, status: 'CONFIRMED', stock_status: 'RESERVED', payment_status: 'AUTHORIZED' }],
    orderItems: [{ order_id: ORDER, sku: 'KB-101', quantity: 2 }],
    history: new Map([
      [`${ORDER}/STOCK_RESERVED`, 1],
      [`${ORDER}/PAYMENT_AUTHORIZED`, 1],
      [`${ORDER}/ORDER_CONFIRMED`, 1],
    ]),
    outbox: {
      orders: [
        row(ids.created, 1, 'ORDER_CREATED', 'order'),
        row(ids.confirmed, 2, 'ORDER_CONFIRMED', 'order'),
      ],
      inventory: [row(ids.reserved, 1, 'STOCK_RESERVED', 'reservation')],
      billing: [row(ids.authorized, 1, 'PAYMENT_AUTHORIZED', 'payment')],
    },
    processed: {
      inventory: [{ event_id: ids.created, event_type: 'ORDER_CREATED' }],
      billing: [{ event_id: ids.created, event_type: 'ORDER_CREATED' }],
      orders: [
        { event_id: ids.reserved, event_type: 'STOCK_RESERVED' },
        { event_id: ids.authorized, event_type: 'PAYMENT_AUTHORIZED' },
      ],
    },
    reservations: [{ order_id: ORDER, status: 'RESERVED' }],
    reservationItems: [{ order_id: ORDER, sku: 'KB-101', quantity: 2 }],
    stock: new Map([['KB-101', 98]]),
    payments: [{ order_id: ORDER, status: 'AUTHORIZED' }],
    topics,
    messages: new Map([
      [
        topics.events.orders,
        [
          message(topics.events.orders, 0, ids.created, 'ORDER_CREATED'),
          message(topics.events.orders, 1, ids.confirmed, 'ORDER_CONFIRMED'),
        ],
      ],
      [topics.events.inventory, [message(topics.events.inventory, 0, ids.reserved, 'STOCK_RESERVED')]],
      [topics.events.billing, [message(topics.events.billing, 0, ids.authorized, 'PAYMENT_AUTHORIZED')]],
    ]),
    sentDirectly: [],
    groups: { orders: 'p.orders', inventory: 'p.inventory', billing: 'p.billing' },
    expected: { outboxFailed: [], consumerDeadLetters: [] },
    serviceDuplicateCounters: {},
  };
}

const failed = (results: InvariantResult[]) =>
  Object.fromEntries(results.filter((r) => !r.passed).map((r) => [r.name, r.violations]));

describe('invariant checker', () => {
  it('passes a consistent run', () => {
    expect(failed(checkInvariants(consistent()))).toEqual({});
  });

  it('counts a re-sent event as a duplicate, not a violation', () => {
    const s = consistent();
    s.messages
      .get(topics.events.orders)
      ?.splice(1, 0, message(topics.events.orders, 1, ids.created, 'ORDER_CREATED'));
    const results = checkInvariants(s);
    expect(failed(results)).toEqual({});
    expect(results.find((r) => r.name === 'duplicates-reconcile')?.counts['order.events duplicates']).toBe(1);
  });

  it('catches an event that never reached its topic', () => {
    const s = consistent();
    s.messages.set(topics.events.inventory, []);
    expect(Object.keys(failed(checkInvariants(s)))).toContain('every-event-published');
  });

  it('catches a row the polling relay left pending, even when its event is on the topic', () => {
    const s = consistent();
    const first = s.outbox.inventory[0];
    if (first) first.status = 'pending';
    expect(failed(checkInvariants(s))['every-event-published']?.[0]).toMatch(
      /inventory outbox row still pending: 1/,
    );
  });

  /** The consistent run published by Debezium: nothing marks the rows, they stay pending. */
  function debezium(): Snapshot {
    const s = consistent();
    s.relayMode = 'debezium';
    for (const database of ['orders', 'inventory', 'billing'] as const)
      for (const r of s.outbox[database]) r.status = 'pending';
    return s;
  }

  it('passes a debezium run whose rows stay pending with every event on its topic', () => {
    expect(failed(checkInvariants(debezium()))).toEqual({});
  });

  it('catches, in debezium mode, a row whose event is not on its topic', () => {
    const s = debezium();
    s.messages.set(topics.events.billing, []);
    expect(failed(checkInvariants(s))['every-event-published']?.[0]).toMatch(
      /billing outbox row not on p\.payment\.events \(debezium mode\): 1 \(e\.g\. e-authorized/,
    );
  });

  it('catches a ghost event (on the topic, no committed outbox row)', () => {
    const s = consistent();
    s.messages
      .get(topics.events.orders)
      ?.push(message(topics.events.orders, 2, 'e-ghost', 'ORDER_CANCELLED'));
    expect(failed(checkInvariants(s))['no-ghost-events']?.[0]).toMatch(
      /without a committed outbox row: 1 \(e\.g\. .*e-ghost/,
    );
  });

  /** The consistent run in a naive write mode: ORDER_CREATED sent by the request, with no outbox row. */
  function naive(): Snapshot {
    const s = consistent();
    s.writeMode = 'commit-then-publish';
    s.outbox.orders = s.outbox.orders.filter((r) => r.event_type !== 'ORDER_CREATED');
    s.sentDirectly = [{ id: ids.created, aggregate_id: ORDER }];
    return s;
  }

  it('passes a naive write that happened to lose nothing', () => {
    const results = checkInvariants(naive());
    expect(failed(results)).toEqual({});
    expect(results.find((r) => r.name === 'no-lost-or-ghost-orders')?.counts).toMatchObject({
      lost: 0,
      ghost: 0,
    });
  });

  it('catches a lost event: a committed order whose ORDER_CREATED never reached the topic', () => {
    const s = naive();
    const lost = '00000000-0000-4000-8000-000000000002';
    s.orders.push({ id: lost, status: 'PENDING', stock_status: null, payment_status: null });
    const result = checkInvariants(s).find((r) => r.name === 'no-lost-or-ghost-orders');
    expect(result?.violations).toEqual([
      `lost: committed order whose ORDER_CREATED is not on the topic: 1 (e.g. ${lost})`,
    ]);
    expect(result?.counts).toMatchObject({ lost: 1, ghost: 0, stuckPending: 1 });
  });

  it('catches a ghost event: ORDER_CREATED on the topic, and its effects, for an order that never committed', () => {
    const s = naive();
    const ghost = '00000000-0000-4000-8000-000000000003';
    s.messages
      .get(topics.events.orders)
      ?.push({ ...message(topics.events.orders, 2, 'e-ghost', 'ORDER_CREATED'), key: ghost });
    s.sentDirectly.push({ id: 'e-ghost', aggregate_id: ghost });
    s.reservations.push({ order_id: ghost, status: 'RESERVED' });
    s.payments.push({ order_id: ghost, status: 'AUTHORIZED' });
    const violations = failed(checkInvariants(s));
    expect(violations['no-lost-or-ghost-orders']).toEqual([
      `ghost: ORDER_CREATED on the topic for an order that never committed: 1 (e.g. ${ghost})`,
      `ghost: inventory reservation for an order that does not exist: 1 (e.g. ${ghost} (RESERVED))`,
      `ghost: billing payment for an order that does not exist: 1 (e.g. ${ghost} (AUTHORIZED))`,
    ]);
    expect(violations['no-ghost-events']?.[0]).toMatch(
      /ORDER_CREATED on p\.order\.events for an order that never committed/,
    );
  });

  it('does not count a poison ORDER_CREATED the scenario planted (no order behind it) as a ghost', () => {
    const s = consistent();
    const planted = '00000000-0000-4000-8000-000000000004';
    s.messages
      .get(topics.events.orders)
      ?.push({ ...message(topics.events.orders, 2, 'e-poison', 'ORDER_CREATED'), key: planted });
    s.expected.consumerDeadLetters.push('e-poison');
    const result = checkInvariants(s).find((r) => r.name === 'no-lost-or-ghost-orders');
    expect(result?.passed).toBe(true);
    expect(result?.counts).toMatchObject({ ghost: 0 });
    // Not planted: the same message is a ghost.
    s.expected.consumerDeadLetters.length = 0;
    expect(checkInvariants(s).find((r) => r.name === 'no-lost-or-ghost-orders')?.counts).toMatchObject({
      ghost: 1,
    });
  });

  it('catches a later event delivered before an earlier one of the same order', () => {
    const s = consistent();
    s.messages.get(topics.events.orders)?.reverse();
    expect(failed(checkInvariants(s))['per-aggregate-order']?.[0]).toMatch(
      /first deliveries out of seq order/,
    );
  });

  it('catches a reply applied twice by orders and stock taken twice by inventory', () => {
    const s = consistent();
    s.history.set(`${ORDER}/STOCK_RESERVED`, 2);
    s.stock.set('KB-101', 96);
    const violations = failed(checkInvariants(s));
    expect(violations['applied-exactly-once']?.[0]).toMatch(
      /orders history entries per STOCK_RESERVED reply/,
    );
    expect(violations['stock-balance']?.[0]).toMatch(/taken 4, reserved 2/);
  });

  it('catches an order left PENDING and an acknowledged order that was never committed', () => {
    const s = consistent();
    const [order] = s.orders;
    if (order) order.status = 'PENDING';
    s.acknowledged.push('00000000-0000-4000-8000-00000000dead');
    const violations = failed(checkInvariants(s));
    expect(violations['saga-final-states']?.[0]).toMatch(/not final/);
    expect(violations['acknowledged-orders-committed']?.[0]).toMatch(
      /acknowledged with 201 but not committed/,
    );
  });

  it('catches an unexpected dead letter', () => {
    const s = consistent();
    const [created] = s.outbox.orders;
    if (created) created.status = 'failed';
    expect(Object.keys(failed(checkInvariants(s)))).toContain('dead-letters-accounted');
  });

  describe('after a database failover', () => {
    const LOST = '00000000-0000-4000-8000-000000000009';
    const failover = (s: Snapshot, replication: 'async' | 'sync') => {
      s.failover = { replication };
      return checkInvariants(s).find((r) => r.name === 'failover-announces-no-lost-order');
    };

    it('counts an acknowledged order an asynchronous standby never received, announced nowhere, as lost and passes', () => {
      const s = consistent();
      s.acknowledged.push(LOST);
      const results = checkInvariants({ ...s, failover: { replication: 'async' } });
      expect(failed(results)).toEqual({});
      expect(failover(s, 'async')?.counts).toMatchObject({ ordersLost: 1, ghostEvents: 0 });
    });

    it('catches a ghost: the lost order announced on Kafka, with a reservation and a payment for it', () => {
      const s = consistent();
      s.acknowledged.push(LOST);
      s.messages
        .get(topics.events.orders)
        ?.push({ ...message(topics.events.orders, 2, 'e-lost', 'ORDER_CREATED'), key: LOST });
      s.reservations.push({ order_id: LOST, status: 'RESERVED' });
      s.payments.push({ order_id: LOST, status: 'AUTHORIZED' });
      const result = failover(s, 'async');
      expect(result?.passed).toBe(false);
      expect(result?.counts).toMatchObject({
        ordersLost: 1,
        ghostEvents: 1,
        effectsOfOrdersThatDoNotExist: 2,
      });
    });

    it('catches an acknowledged order lost with synchronous replication', () => {
      const s = consistent();
      s.acknowledged.push(LOST);
      const result = failover(s, 'sync');
      expect(result?.violations).toEqual([
        `acknowledged order lost with synchronous replication: 1 (e.g. ${LOST})`,
      ]);
    });
  });
});
