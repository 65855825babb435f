-- Up Migration
-- The order saga: the orders service records each reply from inventory and billing, and decides
-- the order's fate once it knows enough (see src/saga/recordReply.ts).

alter table orders
  -- null until inventory answers; then RESERVED, REJECTED, or RELEASED after a cancellation.
  add column stock_status   text check (stock_status in ('RESERVED', 'REJECTED', 'RELEASED')),
  -- null until billing answers; then AUTHORIZED, DECLINED, or VOIDED after a cancellation.
  add column payment_status text check (payment_status in ('AUTHORIZED', 'DECLINED', 'VOIDED')),
  add column cancel_reason  text;

-- What happened to an order, in order: shown by GET /orders/:id.
create table order_history (
  id         bigserial primary key,
  order_id   uuid not null references orders (id),
  event_type text not null,
  detail     text,
  at         timestamptz(3) not null default now()
);

-- An order's history, oldest first.
create index order_history_order_idx on order_history (order_id, id);

-- Down Migration
drop table order_history;
alter table orders drop column stock_status, drop column payment_status, drop column cancel_reason;
