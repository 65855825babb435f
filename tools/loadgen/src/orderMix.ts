import { CATALOG, CURRENCY, MAX_QUANTITY, PAYMENT_LIMIT_CENTS, type Product } from './catalog.ts';
import { pickWeighted, type Random, randomInt, seededRandom } from './random.ts';

export type OrderKind = 'valid' | 'outOfStock' | 'declined' | 'invalid';
export const ORDER_KINDS: readonly OrderKind[] = ['valid', 'outOfStock', 'declined', 'invalid'];

/** Relative weights of the kinds; a kind left out is never sent. */
export type OrderMix = Partial<Record<OrderKind, number>>;

const DEFAULT_MIX: Readonly<Record<OrderKind, number>> = {
  valid: 85,
  outOfStock: 5,
  declined: 5,
  invalid: 5,
};

/** One request the generator will send: its kind, the exact body, and for invalid ones the fault. */
export type PlannedOrder = {
  kind: OrderKind;
  /** The raw body: an invalid request may not even be JSON. */
  body: string;
  /** What is wrong with an invalid request, and the status the API answers it with. */
  fault?: { name: string; expectedStatus: number };
};

type Line = { sku: string; quantity: number };

/** Every weight a finite number ≥ 0 and at least one above 0, or an error naming the bad weight. */
export function checkMix(mix: OrderMix): Record<OrderKind, number> {
  const weights = Object.fromEntries(ORDER_KINDS.map((kind) => [kind, mix[kind] ?? 0])) as Record<
    OrderKind,
    number
  >;
  for (const key of Object.keys(mix)) {
    if (!ORDER_KINDS.includes(key as OrderKind)) {
      throw new Error(`unknown order kind "${key}" in the mix; expected one of ${ORDER_KINDS.join(', ')}`);
    }
  }
  for (const kind of ORDER_KINDS) {
    if (!Number.isFinite(weights[kind]) || weights[kind] < 0) {
      throw new Error(`the mix weight of ${kind} must be a number ≥ 0, got ${mix[kind]}`);
    }
  }
  if (ORDER_KINDS.every((kind) => weights[kind] === 0)) {
    throw new Error('the mix needs at least one kind with a weight above 0');
  }
  return weights;
}

/**
 * Valid and declined orders: one or two lines of one or two units. Small on purpose: every
 * confirmed order takes stock away, and the seeded stock (1,450 units) has to last a run. SKUs
 * are picked in proportion to their seeded stock, so no single SKU runs out long before the rest.
 */
function smallLines(random: Random): Line[] {
  const first = pickWeighted(random, CATALOG, (product) => product.seededStock);
  const lines = [{ sku: first.sku, quantity: randomInt(random, 1, 2) }];
  if (random() < 0.3) {
    const second = pickWeighted(random, CATALOG, (product) =>
      product.sku === first.sku ? 0 : product.seededStock,
    );
    lines.push({ sku: second.sku, quantity: randomInt(random, 1, 2) });
  }
  return lines;
}

/**
 * Out of stock: one unit more than the SKU's whole seeded stock, so inventory rejects it however
 * much stock is left. Only SKUs where that quantity is still a valid request (≤ MAX_QUANTITY) and
 * a payment billing authorizes (≤ PAYMENT_LIMIT_CENTS): the order must fail for stock alone.
 */
const OUT_OF_STOCK_CANDIDATES: readonly Product[] = CATALOG.filter(
  (product) =>
    product.seededStock + 1 <= MAX_QUANTITY &&
    (product.seededStock + 1) * product.unitPriceCents <= PAYMENT_LIMIT_CENTS,
);

const validBody = (customerId: string, items: Line[]) => ({ customerId, currency: CURRENCY, items });

type Fault = { name: string; expectedStatus: number; body: (random: Random) => string };

/** A fault whose body is `request` (a string as it is, anything else as JSON). */
const fault = (
  name: string,
  expectedStatus: number,
  request: unknown | ((random: Random) => unknown),
): Fault => ({
  name,
  expectedStatus,
  body: (random) => {
    const body = typeof request === 'function' ? request(random) : request;
    return typeof body === 'string' ? body : JSON.stringify(body);
  },
});

/** An otherwise valid order of customer-0 with these lines. */
const withLines = (...items: Line[]) => validBody('customer-0', items);

/**
 * The ways a request can be wrong, each with the answer the orders API gives it. Most are refused
 * by validation (400) before any database work; an unknown SKU passes validation and is refused
 * when the order is priced (422). In every case nothing is written.
 */
const FAULTS: readonly Fault[] = [
  fault('missing customerId', 400, { currency: CURRENCY, items: [{ sku: 'KB-101', quantity: 1 }] }),
  fault('quantity 0', 400, withLines({ sku: 'MS-202', quantity: 0 })),
  fault('fractional quantity', 400, withLines({ sku: 'HD-404', quantity: 1.5 })),
  fault('quantity above the maximum', 400, withLines({ sku: 'CB-505', quantity: MAX_QUANTITY + 1 })),
  fault('currency not ISO 4217', 400, { ...withLines({ sku: 'KB-101', quantity: 1 }), currency: 'euro' }),
  fault('no items', 400, withLines()),
  fault('same sku twice', 400, withLines({ sku: 'MS-202', quantity: 1 }, { sku: 'MS-202', quantity: 1 })),
  // Prices come from the catalog, never from the client: a price in the body is refused.
  fault('client-supplied price', 400, withLines({ sku: 'KB-101', quantity: 1, unitPriceCents: 1 } as Line)),
  fault('malformed JSON', 400, '{"customerId": "customer-0", "items": ['),
  fault('unknown sku', 422, (random: Random) =>
    withLines({ sku: `NO-${randomInt(random, 100, 999)}`, quantity: 1 }),
  ),
];

/**
 * Plans the run's requests one after the other. With the same seed and mix, the n-th request is
 * always the same (the idempotency keys are not part of the plan: they must be new every run).
 */
export function createOrderPlanner(options: { seed: number; mix?: OrderMix }): () => PlannedOrder {
  const weights = checkMix(options.mix ?? DEFAULT_MIX);
  const random = seededRandom(options.seed);
  return () => {
    const kind = pickWeighted(random, ORDER_KINDS, (k) => weights[k]);
    switch (kind) {
      case 'valid': {
        const body = validBody(`customer-${randomInt(random, 1, 500)}`, smallLines(random));
        return { kind, body: JSON.stringify(body) };
      }
      case 'declined': {
        // billing's simulated provider declines every customer whose id starts with "declined".
        const body = validBody(`declined-${randomInt(random, 1, 500)}`, smallLines(random));
        return { kind, body: JSON.stringify(body) };
      }
      case 'outOfStock': {
        const product = pickWeighted(random, OUT_OF_STOCK_CANDIDATES, () => 1);
        const items = [{ sku: product.sku, quantity: product.seededStock + 1 }];
        return { kind, body: JSON.stringify(validBody(`customer-${randomInt(random, 1, 500)}`, items)) };
      }
      case 'invalid': {
        const fault = pickWeighted(random, FAULTS, () => 1);
        return {
          kind,
          body: fault.body(random),
          fault: { name: fault.name, expectedStatus: fault.expectedStatus },
        };
      }
    }
  };
}
