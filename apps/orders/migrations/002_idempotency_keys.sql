-- Up Migration
-- Idempotency-Key support for POST /orders: a client that retries with the same key gets the
-- order it already created instead of a second one.

create table idempotency_keys (
  key          text primary key,
  -- sha256 of the validated request body: the same key with a different body is refused (422).
  request_hash text not null,
  -- Deferred so the key can be inserted FIRST in the transaction, before the order exists: the
  -- insert is what serializes concurrent duplicates (the second waits on this primary key until
  -- the first commits, then sees its row), and the order it names is checked at commit.
  order_id     uuid not null references orders (id) deferrable initially deferred,
  created_at   timestamptz not null default now()
);

-- Down Migration
drop table idempotency_keys;
