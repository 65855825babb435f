-- Up Migration
-- Reads of one order's events, whatever their status: the console's order timeline (an order's
-- events in each service's outbox) and its orders list (the trace id of each order's
-- ORDER_CREATED, and whether a pending order has one). outbox_aggregate_idx covers only rows not
-- yet published (the relay's ordering check), so those reads scanned the whole outbox, a day of
-- events every second per open tab, until they timed out and the list went empty (issue 23).
-- A full index costs one more index write per event; the outbox stays small enough for it to be
-- cheap, since retention deletes published rows (docs/design.md, "The relay").
-- `if not exists`: on a live outbox the index can be built beforehand with `create index
-- concurrently` (docs/production.md, "Upgrading a live outbox"), and this statement then finds it.
create index if not exists outbox_aggregate_id_idx on outbox (aggregate_id, seq);

-- Down Migration
drop index outbox_aggregate_id_idx;
