import { describe, expect, it } from 'vitest';
import { CATALOG, MAX_QUANTITY, PAYMENT_LIMIT_CENTS } from '../src/catalog.ts';
import { createOrderPlanner, type OrderKind, type PlannedOrder } from '../src/orderMix.ts';

const plan = (n: number, seed: number, mix?: Partial<Record<OrderKind, number>>): PlannedOrder[] => {
  const next = createOrderPlanner({ seed, ...(mix ? { mix } : {}) });
  return Array.from({ length: n }, next);
};

const shares = (orders: PlannedOrder[]) => {
  const counts: Record<string, number> = {};
  for (const order of orders) counts[order.kind] = (counts[order.kind] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).map(([kind, n]) => [kind, n / orders.length]));
};

describe('order mix', () => {
  it('samples kinds in proportion to the weights', () => {
    const got = shares(plan(20_000, 1, { valid: 70, outOfStock: 10, declined: 15, invalid: 5 }));
    expect(got.valid).toBeCloseTo(0.7, 1);
    expect(got.outOfStock).toBeCloseTo(0.1, 1);
    expect(got.declined).toBeCloseTo(0.15, 1);
    expect(got.invalid).toBeCloseTo(0.05, 1);
    for (const [kind, share] of Object.entries({
      valid: 0.7,
      outOfStock: 0.1,
      declined: 0.15,
      invalid: 0.05,
    })) {
      expect(Math.abs((got[kind] ?? 0) - share), kind).toBeLessThan(0.015);
    }
  });

  it('never sends a kind left out of the mix', () => {
    expect(new Set(plan(2_000, 2, { valid: 1, invalid: 1 }).map((o) => o.kind))).toEqual(
      new Set(['valid', 'invalid']),
    );
  });

  it('the same seed plans the same requests; another seed plans others', () => {
    expect(plan(200, 42)).toEqual(plan(200, 42));
    expect(plan(200, 43)).not.toEqual(plan(200, 42));
  });

  it('builds each kind so that its fate is known in advance', () => {
    const stock = new Map(CATALOG.map((p) => [p.sku, p]));
    for (const order of plan(2_000, 3, { valid: 1, outOfStock: 1, declined: 1, invalid: 1 })) {
      if (order.kind === 'invalid') {
        expect([400, 422]).toContain(order.fault?.expectedStatus);
        continue;
      }
      const body = JSON.parse(order.body) as {
        customerId: string;
        items: { sku: string; quantity: number }[];
      };
      const total = body.items.reduce(
        (sum, i) => sum + (stock.get(i.sku)?.unitPriceCents ?? 0) * i.quantity,
        0,
      );
      expect(total, 'billing must not decline for the amount').toBeLessThanOrEqual(PAYMENT_LIMIT_CENTS);
      expect(body.customerId.startsWith('declined')).toBe(order.kind === 'declined');
      for (const item of body.items) {
        expect(item.quantity).toBeLessThanOrEqual(MAX_QUANTITY);
        const seeded = stock.get(item.sku)?.seededStock ?? 0;
        if (order.kind === 'outOfStock') expect(item.quantity).toBeGreaterThan(seeded);
        else expect(item.quantity).toBeLessThanOrEqual(2);
      }
    }
  });

  it('refuses a mix with an unknown kind, a negative weight, or nothing to send', () => {
    expect(() => createOrderPlanner({ seed: 1, mix: { vaild: 1 } as never })).toThrow(
      /unknown order kind "vaild"/,
    );
    expect(() => createOrderPlanner({ seed: 1, mix: { valid: -1 } })).toThrow(/valid must be a number ≥ 0/);
    expect(() => createOrderPlanner({ seed: 1, mix: { valid: 0 } })).toThrow(/at least one kind/);
  });
});
