import { z } from 'zod';
import type { Prisma } from '../db.ts';

export const ORDER_STATUSES = ['PENDING', 'CONFIRMED', 'CANCELLED'] as const;

/** `GET /orders?status=&limit=&cursor=`: newest first, keyset-paged. */
export const listOrdersQuery = z.strictObject({
  status: z.enum(ORDER_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z
    .string()
    .transform((value, ctx) => {
      const decoded = decodeCursor(value);
      if (!decoded) ctx.addIssue({ code: 'custom', message: 'not a cursor this API returned' });
      return decoded ?? z.NEVER;
    })
    .optional(),
});

export type ListOrdersQuery = z.output<typeof listOrdersQuery>;

type Cursor = { createdAt: Date; id: string };

/**
 * The cursor is the (created_at, id) of the last order on the page, so the next page starts
 * strictly after it: no skipped or repeated rows when orders arrive between page requests,
 * which OFFSET paging cannot promise.
 */
function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.createdAt.toISOString()}|${cursor.id}`).toString('base64url');
}

/** Cursors name a time the API wrote: after this and before the year 10000 (timestamptz(3) range). */
const EARLIEST = Date.UTC(2000, 0, 1);
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * A cursor is client input like any other: exactly what encodeCursor writes (two parts, an ISO
 * time in the range above that round-trips, a UUID) or nothing, so no decoded value PostgreSQL
 * would refuse or misread (year 0, negative years, extra parts) reaches SQL.
 */
function decodeCursor(value: string): Cursor | undefined {
  const parts = Buffer.from(value, 'base64url').toString().split('|');
  if (parts.length !== 2) return undefined;
  const [time = '', id = ''] = parts;
  if (!ISO_MS.test(time) || !z.uuid().safeParse(id).success) return undefined;
  const createdAt = new Date(time);
  const ms = createdAt.getTime();
  if (Number.isNaN(ms) || ms < EARLIEST || ms > LATEST || createdAt.toISOString() !== time) return undefined;
  return { createdAt, id };
}

export async function listOrders(prisma: Prisma, query: ListOrdersQuery) {
  const { cursor } = query;
  const orders = await prisma.order.findMany({
    where: {
      ...(query.status ? { status: query.status } : {}),
      ...(cursor
        ? {
            OR: [
              { createdAt: { lt: cursor.createdAt } },
              { createdAt: cursor.createdAt, id: { lt: cursor.id } },
            ],
          }
        : {}),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
    include: { items: true },
  });
  const page = orders.slice(0, query.limit);
  const last = page.at(-1);
  return {
    orders: page,
    nextCursor: orders.length > query.limit && last ? encodeCursor(last) : undefined,
  };
}
