import { deadLettersAccounted, failoverAnnouncesNoLostOrder, noGhostEvents } from './nothingExtra.ts';
import { acknowledgedOrdersCommitted, everyEventPublished, noLostOrGhostOrders } from './nothingLost.ts';
import { appliedExactlyOnce, duplicatesReconcile, perAggregateOrder } from './onceInOrder.ts';
import type { InvariantResult } from './result.ts';
import { sagaFinalStates, stockBalance } from './sagaOutcome.ts';
import type { Snapshot } from './snapshot.ts';

export { DUAL_WRITE_COUNTS } from './nothingLost.ts';
export type { InvariantResult } from './result.ts';
export { type ExpectedDeadLetters, readStock, type Snapshot, takeSnapshot } from './snapshot.ts';

/** Every invariant, in the order a reader would check them: nothing lost, nothing extra, nothing twice. */
export const INVARIANTS: ((snapshot: Snapshot) => InvariantResult)[] = [
  acknowledgedOrdersCommitted,
  everyEventPublished,
  noGhostEvents,
  noLostOrGhostOrders,
  perAggregateOrder,
  appliedExactlyOnce,
  duplicatesReconcile,
  sagaFinalStates,
  stockBalance,
  deadLettersAccounted,
  failoverAnnouncesNoLostOrder,
];

export function checkInvariants(snapshot: Snapshot): InvariantResult[] {
  return INVARIANTS.map((check) => check(snapshot));
}
