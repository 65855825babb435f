import { z } from 'zod';

export const MAX_ITEMS = 50;
export const MAX_QUANTITY = 1000;

/**
 * A trimmed, non-empty string of at most `max` characters, of valid Unicode text. PostgreSQL text
 * and jsonb cannot hold U+0000, so a NUL is refused here (400) instead of failing the insert (500);
 * a lone surrogate (`"\ud800"` is valid JSON) would be stored as U+FFFD, altered without a word,
 * so it is refused too.
 */
const text = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine((value) => !value.includes('\u0000'), 'must not contain NUL (U+0000) characters')
    .refine((value) => value.isWellFormed(), 'must be valid Unicode text (no lone surrogates)');

/** The body of POST /orders. Prices are not part of it: they come from the catalog. */
export const orderRequest = z
  .strictObject({
    customerId: text(100),
    currency: z.string().regex(/^[A-Z]{3}$/, 'expected an ISO 4217 code such as EUR'),
    items: z
      .array(
        z.strictObject({
          sku: text(64),
          quantity: z.number().int().min(1).max(MAX_QUANTITY),
        }),
      )
      .min(1, 'an order needs at least one item')
      .max(MAX_ITEMS, `at most ${MAX_ITEMS} items per order`),
  })
  .superRefine((order, ctx) => {
    const seen = new Set<string>();
    order.items.forEach((item, index) => {
      if (seen.has(item.sku)) {
        ctx.addIssue({
          code: 'custom',
          path: ['items', index, 'sku'],
          message: `sku ${item.sku} appears twice`,
        });
      }
      seen.add(item.sku);
    });
  });

export type OrderRequest = z.infer<typeof orderRequest>;
