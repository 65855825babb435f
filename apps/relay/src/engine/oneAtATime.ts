import type { ClaimedRow } from '@outbox/outbox';
import { toError } from '@outbox/runtime/errors';
import {
  aggregateKey,
  failBatch,
  giveBack,
  type HeldLeases,
  type OutcomeDeps,
  type Step,
} from './batchOutcomes.ts';
import { classifyPublishError } from './publishErrors.ts';
import type { Publisher } from './publisher.ts';
import { toOutgoingEvent } from './publisher.ts';

export type OneAtATimeDeps = {
  publisher: Publisher;
  outcomes: OutcomeDeps;
  /** Mark one acknowledged row published; false if the mark failed (relay.ts). */
  published: (rows: ClaimedRow[]) => Promise<boolean>;
};

/**
 * A batch the broker refused as a whole, sent again one event at a time: the refused event is
 * found and gets its outcome (a retry later, or a dead letter), the events of other aggregates go
 * out, and the later events of the refused event's aggregate are held back and given back, so
 * that the aggregate's order holds. A broker that becomes unavailable meanwhile ends the walk:
 * what is left goes back as for any unavailable broker.
 */
export async function publishOneAtATime(
  { publisher, outcomes, published }: OneAtATimeDeps,
  rows: ClaimedRow[],
  leases: HeldLeases,
): Promise<Step> {
  const heldBack = new Set<string>();
  const behind: ClaimedRow[] = [];
  for (const [index, row] of rows.entries()) {
    if (heldBack.has(aggregateKey(row))) {
      behind.push(row);
      continue;
    }
    try {
      await publisher.publish([toOutgoingEvent(row)]);
    } catch (err) {
      const error = toError(err);
      const kind = classifyPublishError(error);
      if (kind === 'unavailable') {
        await giveBack(outcomes, behind, { error: error.message, delayMs: 0 });
        return failBatch(outcomes, rows.slice(index), kind, error);
      }
      await failBatch(outcomes, [row], kind, error);
      heldBack.add(aggregateKey(row));
      leases.settled([row]);
      continue;
    }
    if (!(await published([row]))) heldBack.add(aggregateKey(row));
    leases.settled([row]);
  }
  // Unsent: an earlier event of their aggregate is waiting for its retry, or dead-lettered.
  await giveBack(outcomes, behind, {
    error: 'given back unpublished: an earlier event of its aggregate was refused',
    delayMs: 0,
  });
  return { claimed: rows.length, retryInMs: 0, heldBack };
}
