-- Up Migration
-- The inbox side of exactly-once effects: a consumer records each event id it applied, in the
-- same transaction as the effect. A redelivered event hits the primary key and changes nothing.

create table processed_events (
  consumer     text not null,
  event_id     uuid not null,
  event_type   text not null,
  processed_at timestamptz not null default now(),
  primary key (consumer, event_id)
);

-- Down Migration
drop table processed_events;
