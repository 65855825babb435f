-- Up Migration
-- Retention of processed_events (packages/inbox/src/retention.ts) deletes the oldest rows.
-- Rows arrive in processed_at order, so a BRIN index finds them for the price of a few pages, and
-- costs the dedup insert on the hot path next to nothing (a B-tree would be one more index write).

create index processed_events_processed_at_brin on processed_events using brin (processed_at);

-- Down Migration
drop index processed_events_processed_at_brin;
