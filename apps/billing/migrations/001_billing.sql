-- Up Migration
-- The billing service's own tables. (outbox and processed_events come from packages/outbox/migrations and packages/inbox/migrations.)

-- One payment decision per order. The primary key on order_id is a second line of defence
-- behind processed_events: even a bug in the dedup path could not authorize an order twice.
create table payments (
  order_id         uuid primary key,
  -- The ORDER_CREATED event that caused this payment; also the payment provider's idempotency
  -- key, so an authorization retried after a crash is never charged twice.
  event_id         uuid not null unique,
  customer_id      text not null,
  currency         char(3) not null,
  amount_cents     bigint not null check (amount_cents > 0),
  status           text not null check (status in ('AUTHORIZED', 'DECLINED', 'VOIDED')),
  -- The provider's reference for an authorization (null when declined).
  authorization_id text,
  decline_reason   text,
  created_at       timestamptz not null default now()
);

-- Down Migration
drop table payments;
