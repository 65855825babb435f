// 200 orders placed at once: every one is written with exactly one event, and the outbox's
// database-assigned sequence gives every event its own position. (Per-aggregate ordering of
// several events of one aggregate is the relay's concern and is tested there.)
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OrdersApi, postOrder, QUEUE_EVERY_REQUEST, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

let api: OrdersApi;
beforeAll(async () => {
  api = await startOrdersApi('orders_concurrent', { admission: QUEUE_EVERY_REQUEST });
});
afterAll(() => api?.close());

describe('200 concurrent POST /orders', () => {
  it('gives 200 orders and exactly one ORDER_CREATED event each, with distinct sequence numbers', async () => {
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        postOrder(api.baseUrl, {
          customerId: `c-${i}`,
          currency: 'EUR',
          items: [{ sku: 'MS-202', quantity: 1 }],
        }),
      ),
    );
    expect(responses.filter((res) => res.status === 201)).toHaveLength(200);
    const ids = await Promise.all(responses.map(async (res) => ((await res.json()) as { id: string }).id));

    const events = await queryOnce<{ aggregate_id: string; seq: string; event_type: string }>(
      api.db.url,
      'select aggregate_id, seq, event_type from outbox order by seq',
    );
    expect(events).toHaveLength(200);
    expect(new Set(events.map((event) => event.aggregate_id))).toEqual(new Set(ids));
    expect(events.every((event) => event.event_type === 'ORDER_CREATED')).toBe(true);
    const seqs = events.map((event) => BigInt(event.seq));
    expect(new Set(seqs).size).toBe(200);
    const [orders] = await queryOnce<{ count: number }>(
      api.db.url,
      'select count(*)::int as count from orders',
    );
    expect(orders?.count).toBe(200);
  });
});
