-- Up Migration
-- The orders service's own tables. (The outbox comes from packages/outbox/migrations.)

-- What can be ordered and at what price. The API takes prices from here, never from the client.
create table products (
  sku              text primary key,
  name             text not null,
  currency         char(3) not null,
  unit_price_cents bigint not null check (unit_price_cents > 0)
);

create table orders (
  id          uuid primary key,
  customer_id text not null,
  currency    char(3) not null,
  status      text not null check (status in ('PENDING', 'CONFIRMED', 'CANCELLED')),
  total_cents bigint not null check (total_cents > 0),
  -- Millisecond precision, like a JavaScript Date: the (created_at, id) paging cursor then
  -- round-trips exactly through the API.
  created_at  timestamptz(3) not null default now()
);

-- GET /orders: newest first, keyset-paged on (created_at, id).
create index orders_created_at_idx on orders (created_at desc, id desc);

create table order_items (
  order_id         uuid not null references orders (id),
  sku              text not null references products (sku),
  quantity         integer not null check (quantity > 0),
  unit_price_cents bigint not null,
  primary key (order_id, sku)
);

-- The catalog is seeded by 006_seed_catalog.ts, from the list the load generator reads too.

-- Down Migration
drop table order_items;
drop table orders;
drop table products;
