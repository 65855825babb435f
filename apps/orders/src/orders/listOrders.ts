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

function decodeCursor(value: string): Cursor | undefined {
  const [time, id] = Buffer.from(value, 'base64url').toString().split('|');
  const createdAt = new Date(time ?? '');
  if (Number.isNaN(createdAt.getTime()) || !z.uuid().safeParse(id).success || !id) return undefined;
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
