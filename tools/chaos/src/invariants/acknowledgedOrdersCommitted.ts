import { type InvariantResult, tally, Violations, verdict } from './result.ts';
import { orderCreatedEvents, type Snapshot } from './snapshot.ts';

/**
 * An order the API acknowledged is committed, and every committed order has exactly one
 * ORDER_CREATED (its outbox row; in a naive write mode, the event it sent itself).
 */
export function acknowledgedOrdersCommitted(s: Snapshot): InvariantResult {
  const violations = new Violations();
  const committed = new Set(s.orders.map((order) => order.id));
  // In a naive write mode the events the process sent itself count; no-lost-or-ghost-orders names the failures.
  const created = orderCreatedEvents(s);
  const createdPerOrder = tally(created.map((row) => row.aggregate_id));

  // An asynchronous standby promoted after the primary died lacks the primary's last commits:
  // failover-announces-no-lost-order counts those orders and judges what was said of them.
  const lossAllowed = s.failover?.replication === 'async';
  for (const id of s.acknowledged) {
    if (!committed.has(id) && !lossAllowed) violations.add('acknowledged with 201 but not committed', id);
  }
  for (const id of committed) {
    const count = createdPerOrder.get(id) ?? 0;
    if (count !== 1)
      violations.add('committed order without exactly one ORDER_CREATED row', `${id} (${count})`);
  }
  for (const row of created) {
    if (!committed.has(row.aggregate_id))
      violations.add('ORDER_CREATED for an order that was never committed', row.id);
  }
  const acknowledged = new Set(s.acknowledged);
  return verdict(
    'acknowledged-orders-committed',
    'every order the API acknowledged is committed, with exactly one ORDER_CREATED in its outbox',
    {
      acknowledged: s.acknowledged.length,
      committed: committed.size,
      // Committed but never acknowledged: the client gave up (timeout) after the commit. Allowed.
      committedNotAcknowledged: [...committed].filter((id) => !acknowledged.has(id)).length,
    },
    violations,
  );
}
