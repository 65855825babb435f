-- Up Migration
-- A cancellation can reach billing before the order it cancels: a dead-lettered ORDER_CREATED
-- replayed after its ORDER_CANCELLED (docs/design.md#the-saga-in-any-arrival-order). Billing then
-- remembers the cancel as a CANCELLED row, which knows only the order id, so the late
-- ORDER_CREATED finds it and is declined without asking the provider (the row becomes DECLINED)
-- instead of authorizing a payment that nothing would ever void.
alter table payments drop constraint payments_status_check;
alter table payments add constraint payments_status_check
  check (status in ('AUTHORIZED', 'DECLINED', 'VOIDED', 'CANCELLED'));
alter table payments
  alter column event_id drop not null,
  alter column customer_id drop not null,
  alter column currency drop not null,
  alter column amount_cents drop not null;
-- Every decided payment still knows its event, customer and amount.
alter table payments add constraint payments_decided_has_details
  check (status = 'CANCELLED'
         or (event_id is not null and customer_id is not null and currency is not null and amount_cents is not null));

-- Down Migration
delete from payments where status = 'CANCELLED';
alter table payments drop constraint payments_decided_has_details;
alter table payments
  alter column event_id set not null,
  alter column customer_id set not null,
  alter column currency set not null,
  alter column amount_cents set not null;
alter table payments drop constraint payments_status_check;
alter table payments add constraint payments_status_check
  check (status in ('AUTHORIZED', 'DECLINED', 'VOIDED'));
