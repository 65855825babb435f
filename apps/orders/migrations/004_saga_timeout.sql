-- Up Migration
-- The saga's timeout (see src/saga/sagaTimeout.ts): an order that stays PENDING too long is
-- cancelled, and a cancelled order whose stock or payment is still held too long after the
-- decision gets its ORDER_CANCELLED sent once more.

alter table orders
  -- When the order was CONFIRMED or CANCELLED (null while PENDING).
  add column decided_at       timestamptz(3),
  -- When ORDER_CANCELLED was sent a second time because a compensation was overdue (at most once).
  add column cancel_resent_at timestamptz(3);

-- Partial indexes (Prisma cannot express them): the sweeper's two queries read only the few
-- orders still in flight, however many orders the table holds.
create index orders_pending_idx on orders (created_at) where status = 'PENDING';
create index orders_compensation_due_idx on orders (decided_at)
  where status = 'CANCELLED' and (stock_status = 'RESERVED' or payment_status = 'AUTHORIZED')
    and cancel_resent_at is null;

-- Down Migration
drop index orders_compensation_due_idx;
drop index orders_pending_idx;
alter table orders drop column decided_at, drop column cancel_resent_at;
