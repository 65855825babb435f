-- Up Migration
-- What the CDC relay (a Debezium connector, docs/design.md#polling-or-cdc) needs to publish a row
-- exactly as the polling relay does. Debezium's Outbox Event Router can only place whole columns
-- as Kafka headers, so two values the polling relay computes in JavaScript become columns:
--
-- created_at to millisecond precision. The polling relay sends it as ce_time with JavaScript's
-- toISOString() (always three fraction digits: 2026-11-25T15:30:00.120Z); Debezium prints a
-- timestamptz with as many digits as the column's precision. At timestamptz(3) both print the
-- same string. The change rewrites the table once (the outbox is small: retention deletes it).
alter table outbox alter column created_at type timestamptz(3);

-- The stored W3C traceparent as a column of its own, for the CDC relay's traceparent headers.
-- Kept in step with headers by a trigger, so that every writer (writeEvent, orders' one-statement
-- write, tests that insert rows directly) fills it without knowing about it. Not a generated
-- column: PostgreSQL 15's logical replication does not send generated columns (18's can).
alter table outbox add column traceparent text;

create function outbox_traceparent() returns trigger language plpgsql as $$
begin
  new.traceparent := new.headers ->> 'traceparent';
  return new;
end;
$$;

create trigger outbox_traceparent_before_insert
  before insert on outbox
  for each row execute function outbox_traceparent();

-- Down Migration
drop trigger outbox_traceparent_before_insert on outbox;
drop function outbox_traceparent();
alter table outbox drop column traceparent;
alter table outbox alter column created_at type timestamptz;
