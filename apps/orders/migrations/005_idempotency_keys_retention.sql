-- Up Migration
-- Idempotency keys are kept for a window (IDEMPOTENCY_KEY_RETENTION_HOURS), then deleted by the
-- orders process (src/orders/idempotencyRetention.ts). The delete finds expired keys by this index
-- instead of scanning the table.
create index idempotency_keys_created_at_idx on idempotency_keys (created_at);

-- Down Migration
drop index idempotency_keys_created_at_idx;
