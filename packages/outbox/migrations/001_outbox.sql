-- Up Migration
-- The outbox: events written in the same transaction as the business change that caused them.
-- A relay reads it and publishes to Kafka. Shared by every service database (orders, inventory, billing).

create table outbox (
  -- The event's identity, also the CloudEvents `id` consumers deduplicate on.
  id               uuid primary key,
  -- Publication order. Assigned by the database at insert, never by an application clock.
  -- Per aggregate it matches commit order as long as writers of one aggregate's events hold
  -- that aggregate's row lock while inserting (an order's events are written while its row is
  -- created or updated in the same transaction).
  seq              bigserial not null unique,
  -- The producing service (CloudEvents `source`, e.g. /orders).
  source           text not null,
  aggregate_type   text not null,
  aggregate_id     text not null,
  event_type       text not null,
  schema_version   integer not null,
  payload          jsonb not null,
  -- W3C trace context (traceparent, tracestate, baggage) of the transaction that wrote the event.
  headers          jsonb not null default '{}'::jsonb,
  status           text not null default 'pending'
                   check (status in ('pending', 'in_flight', 'published', 'failed')),
  attempts         integer not null default 0,
  next_attempt_at  timestamptz not null default now(),
  lease_owner      text,
  lease_expires_at timestamptz,
  last_error       text,
  created_at       timestamptz not null default now(),
  published_at     timestamptz,
  -- A leased row always says who holds it and until when; nothing else carries a lease.
  constraint outbox_lease_consistent check ((status = 'in_flight') = (lease_owner is not null and lease_expires_at is not null))
);

-- The claim query's index: only rows a relay may still have to publish, in publication order.
-- Published rows (the vast majority over time) are not in it, so it stays small and hot.
create index outbox_claimable_idx on outbox (seq) where status in ('pending', 'in_flight');

-- Per-aggregate ordering checks ("is an earlier event of this aggregate still unpublished?").
create index outbox_aggregate_idx on outbox (aggregate_type, aggregate_id, seq) where status <> 'published';

-- Retention (deletePublished.ts) finds published rows older than the retention by this index,
-- instead of scanning a table that is mostly published rows.
create index outbox_published_at_idx on outbox (published_at) where status = 'published';

-- Wake sleeping relays when events commit. A statement-level trigger sends one notification per
-- inserting statement, and Postgres folds identical notifications of one transaction into one,
-- so a transaction that writes many events still notifies once. Relays also poll, so a lost
-- notification delays an event by at most one poll interval; it never strands it.
create function outbox_notify() returns trigger language plpgsql as $$
begin
  perform pg_notify('outbox', '');
  return null;
end;
$$;

create trigger outbox_notify_after_insert
  after insert on outbox
  for each statement execute function outbox_notify();

-- Down Migration
drop trigger outbox_notify_after_insert on outbox;
drop function outbox_notify();
drop table outbox;
