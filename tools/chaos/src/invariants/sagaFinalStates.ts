import { type InvariantResult, Violations, verdict } from './result.ts';
import type { Snapshot } from './snapshot.ts';

/**
 * Every order reached a final state that agrees with inventory and billing: CONFIRMED iff stock
 * is reserved and the payment authorized; CANCELLED ones had a rejection or decline, and what the
 * other side had granted was compensated (released, voided).
 */
export function sagaFinalStates(s: Snapshot): InvariantResult {
  const violations = new Violations();
  const reservation = new Map(s.reservations.map((r) => [r.order_id, r.status]));
  const payment = new Map(s.payments.map((p) => [p.order_id, p.status]));
  const counts = { confirmed: 0, cancelled: 0, pending: 0 };
  for (const order of s.orders) {
    const stock = reservation.get(order.id);
    const paid = payment.get(order.id);
    const detail = `${order.id} (${order.status}, stock ${stock}, payment ${paid})`;
    if (order.status === 'CONFIRMED') {
      counts.confirmed += 1;
      if (stock !== 'RESERVED' || paid !== 'AUTHORIZED')
        violations.add('confirmed without reserved stock and authorized payment', detail);
    } else if (order.status === 'CANCELLED') {
      counts.cancelled += 1;
      if (stock !== 'REJECTED' && paid !== 'DECLINED')
        violations.add('cancelled without a rejection or decline', detail);
      if (stock === 'RESERVED') violations.add('cancelled but stock still reserved (not released)', detail);
      if (paid === 'AUTHORIZED')
        violations.add('cancelled but payment still authorized (not voided)', detail);
    } else {
      counts.pending += 1;
      violations.add('not final', detail);
    }
    if (order.stock_status !== (stock ?? null))
      violations.add("orders' stock_status differs from inventory", detail);
    if (order.payment_status !== (paid ?? null))
      violations.add("orders' payment_status differs from billing", detail);
  }
  return verdict(
    'saga-final-states',
    'every order is CONFIRMED (stock reserved and payment authorized) or CANCELLED and compensated',
    counts,
    violations,
  );
}
