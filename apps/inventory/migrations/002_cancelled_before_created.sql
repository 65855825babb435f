-- Up Migration
-- A cancellation can reach inventory before the order it cancels: a dead-lettered ORDER_CREATED
-- replayed after its ORDER_CANCELLED (docs/design.md#the-saga-in-any-arrival-order). Inventory
-- then remembers the cancel as a CANCELLED row, so the late ORDER_CREATED finds it and is refused
-- (the row becomes REJECTED) instead of reserving stock that nothing would ever release.
alter table reservations drop constraint reservations_status_check;
alter table reservations add constraint reservations_status_check
  check (status in ('RESERVED', 'REJECTED', 'RELEASED', 'CANCELLED'));

-- Down Migration
delete from reservations where status = 'CANCELLED';
alter table reservations drop constraint reservations_status_check;
alter table reservations add constraint reservations_status_check
  check (status in ('RESERVED', 'REJECTED', 'RELEASED'));
