-- Up Migration
-- The inventory service's own tables. (outbox and processed_events come from packages/outbox/migrations and packages/inbox/migrations.)

-- Units on hand that are not reserved for an order. Never negative: the check is the last line
-- of defence behind the handler's own availability check.
create table stock (
  sku       text primary key,
  available integer not null check (available >= 0)
);

-- One row per order the service has decided on: all lines reserved, or none; RELEASED once
-- the order was cancelled and its stock returned.
create table reservations (
  order_id   uuid primary key,
  status     text not null check (status in ('RESERVED', 'REJECTED', 'RELEASED')),
  reason     text,
  created_at timestamptz not null default now()
);

create table reservation_items (
  order_id uuid not null references reservations (order_id),
  sku      text not null references stock (sku),
  quantity integer not null check (quantity > 0),
  primary key (order_id, sku)
);

-- Stock is seeded by 003_seed_stock.ts, from the catalog the orders service seeds its products from.

-- Down Migration
drop table reservation_items;
drop table reservations;
drop table stock;
