import { DATABASES } from '../stack.ts';
import { type InvariantResult, Violations, verdict } from './result.ts';
import type { Snapshot } from './snapshot.ts';

/**
 * After the orders database failed over to its standby: what the failover lost, and whether any of
 * it was announced.
 * - orders lost: acknowledged with 201, absent from the promoted primary. Allowed only with
 *   asynchronous replication (the commits the standby had not received when the primary died);
 * - ghost events: a message on a topic whose outbox row the promoted primary does not have (the
 *   relay published a row the failover then lost);
 * - effects of orders that do not exist: a reservation or payment for an order the promoted
 *   primary does not have (a ghost's consequence in the other services);
 * - the window without writes: the longest gap between two consecutive orders' commits.
 * Without a failover in the run it checks nothing.
 */
export function failoverAnnouncesNoLostOrder(s: Snapshot): InvariantResult {
  const violations = new Violations();
  const name = 'failover-announces-no-lost-order';
  const description =
    'after a database failover, no event and no effect elsewhere of a commit the failover lost; ' +
    'acknowledged orders lost only with asynchronous replication';
  if (!s.failover) return verdict(name, description, {}, violations);

  const committed = new Set(s.orders.map((order) => order.id));
  const ordersLost = s.acknowledged.filter((id) => !committed.has(id));
  if (s.failover.replication === 'sync')
    for (const id of ordersLost) violations.add('acknowledged order lost with synchronous replication', id);

  let ghostEvents = 0;
  for (const database of DATABASES) {
    const rows = new Set(s.outbox[database].map((row) => row.id));
    for (const message of s.messages.get(s.topics.events[database]) ?? []) {
      if (message.eventId && rows.has(message.eventId)) continue;
      ghostEvents += 1;
      violations.add(
        `ghost: event on ${s.topics.events[database]} whose row the failover lost`,
        `${message.type} ${message.key}`,
      );
    }
  }
  const effects = [
    ...s.reservations.map((r) => ({ what: 'reservation', order: r.order_id })),
    ...s.payments.map((p) => ({ what: 'payment', order: p.order_id })),
  ].filter((effect) => !committed.has(effect.order));
  for (const effect of effects)
    violations.add(`${effect.what} for an order that does not exist`, effect.order);

  const times = s.orders
    .flatMap((order) => (order.created_at ? [new Date(order.created_at).getTime()] : []))
    .sort((a, b) => a - b);
  let windowWithoutWritesMs = 0;
  for (let i = 1; i < times.length; i++)
    windowWithoutWritesMs = Math.max(windowWithoutWritesMs, (times[i] ?? 0) - (times[i - 1] ?? 0));

  return verdict(
    name,
    `${description} (${s.failover.replication} replication)`,
    {
      ordersLost: ordersLost.length,
      ghostEvents,
      effectsOfOrdersThatDoNotExist: effects.length,
      windowWithoutWritesMs,
    },
    violations,
  );
}
