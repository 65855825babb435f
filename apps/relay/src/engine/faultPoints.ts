import type { ClaimedRow, OutboxStore } from '@outbox/outbox';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Publisher } from './publisher.ts';

/** Which test-only fault points are armed (RELAY_FAULT); never in production. */
export type RelayFault = { crashAfterPublish?: number; crashWithPipelinedBatch?: number };

/**
 * Test-only fault points (the chaos suite, docs/chaos.md); the relay kills itself with kill -9:
 * - `crash-after-publish[:n]`: after the n-th batch the broker acknowledged (default 1), before it
 *   marks that batch published, the moment that turns a crash into duplicates on the topic;
 * - `crash-with-pipelined-batch[:n]`: the n-th time a claim returns rows while the previous batch
 *   is with the broker, so it dies holding two leased batches, one sent and one only claimed.
 */
const relayFault = z
  .string()
  .regex(
    /^(crash-after-publish|crash-with-pipelined-batch)(:[1-9][0-9]*)?$/,
    'expected crash-after-publish[:<n>] or crash-with-pipelined-batch[:<n>]',
  )
  .transform((value) => {
    const [point, n] = value.split(':');
    const after = Number(n ?? 1);
    return point === 'crash-after-publish'
      ? { crashAfterPublish: after }
      : { crashWithPipelinedBatch: after };
  });

/** RELAY_FAULT, for the relay's config schema, which refuses it unless OUTBOX_ALLOW_FAULTS allows it. */
export const relayFaultSettings = { RELAY_FAULT: relayFault.optional() };

/** The fault points the relay's ports pass (withFaultPoints); the polling mode passes FaultPoints only when RELAY_FAULT is set. */
export type RelayFaultHooks = Pick<FaultPoints, 'afterBrokerAck' | 'pipelinedClaim'>;

/**
 * The relay's ports with the fault points on them: every publish the broker acknowledged passes
 * `afterBrokerAck` before the relay hears of it (so before its mark), and every claim that returns
 * rows while a publish is with the broker passes `pipelinedClaim`.
 */
export function withFaultPoints(
  ports: { store: OutboxStore; publisher: Publisher },
  faults: RelayFaultHooks,
): { store: OutboxStore; publisher: Publisher } {
  const { store, publisher } = ports;
  let withBroker = 0;
  const claimed = (rows: ClaimedRow[]) => {
    if (withBroker > 0 && rows.length > 0) faults.pipelinedClaim(rows.length);
  };
  return {
    publisher: {
      publish: async (events) => {
        withBroker += 1;
        try {
          await publisher.publish(events);
        } finally {
          withBroker -= 1;
        }
        faults.afterBrokerAck(events.length);
      },
    },
    store: {
      ...store,
      claimBatch: async (...args) => {
        const rows = await store.claimBatch(...args);
        claimed(rows);
        return rows;
      },
      markAndClaim: async (...args) => {
        const result = await store.markAndClaim(...args);
        claimed(result.rows);
        return result;
      },
    },
  };
}

/**
 * The relay's test-only fault points: each makes the process kill -9 itself at one of the worst
 * moments for a relay to die, so the chaos suite can prove nothing is lost (docs/chaos.md).
 */
export class FaultPoints {
  readonly #fault: RelayFault;
  readonly #logger: Logger;
  #acknowledgedBatches = 0;
  #pipelinedClaims = 0;

  constructor(fault: RelayFault, logger: Logger) {
    this.#fault = fault;
    this.#logger = logger;
  }

  /**
   * Between the broker's ack and the mark: the rows stay leased, and after the lease another
   * relay publishes them again (duplicates on the topic, never a loss).
   */
  afterBrokerAck(count: number): void {
    const after = this.#fault.crashAfterPublish;
    if (!after || ++this.#acknowledgedBatches < after) return;
    this.#die({ count }, 'RELAY_FAULT: kill -9 after the broker ack, before marking');
  }

  /**
   * Holding two batches, one with the broker (sent, not acknowledged) and the next one just
   * claimed behind it: both stay leased, and the relay that takes them over must still publish
   * each aggregate's events in order, the sent batch's possibly twice.
   */
  pipelinedClaim(claimed: number): void {
    const after = this.#fault.crashWithPipelinedBatch;
    if (!after || ++this.#pipelinedClaims < after) return;
    this.#die({ claimed }, 'RELAY_FAULT: kill -9 with a batch at the broker and the next one claimed');
  }

  #die(fields: Record<string, number>, message: string): void {
    this.#logger.warn(fields, message);
    process.kill(process.pid, 'SIGKILL');
  }
}
