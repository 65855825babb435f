import type { Logger } from 'pino';

/** Which test-only fault points are armed (RELAY_FAULT in config.ts); never set in production. */
export type RelayFault = { crashAfterPublish?: number; crashWithPipelinedBatch?: number };

/**
 * The relay's test-only fault points: each makes the process kill -9 itself at one of the worst
 * moments for a relay to die, so the chaos suite can prove nothing is lost (docs/chaos.md).
 * Unarmed, each is a counter check and nothing else.
 */
export class FaultPoints {
  readonly #fault: RelayFault;
  readonly #logger: Logger;
  #acknowledgedBatches = 0;
  #pipelinedClaims = 0;

  constructor(fault: RelayFault | undefined, logger: Logger) {
    this.#fault = fault ?? {};
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
