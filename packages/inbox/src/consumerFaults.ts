import type { FaultSwitches } from '@outbox/runtime/config';
import { z } from 'zod';
import type { ChunkResult } from './applyChunk.ts';

// The consumers' kill switches, which the chaos suite uses to prove that a crash at the worst
// moment of a chunk loses and doubles nothing. They live apart from the consumer loop: an app
// passes them in at start-up (ConsumerServiceOptions.faults); production passes nothing, and its
// config refuses the switches unless OUTBOX_ALLOW_FAULTS allows them (refuseFaultsUnlessAllowed).

/** Test and demo hooks around a consumer; none in production. */
export type ConsumerFaults = {
  /** Wraps the transaction each chunk is applied in (where the kill switches strike). */
  transaction?: <Tx>(transaction: Transaction<Tx>) => Transaction<Tx>;
  /** false: a broken build that applies redelivered events again, which the chaos checker must catch. */
  dedup?: boolean;
};

type Transaction<Tx> = <T>(work: (tx: Tx) => Promise<T>) => Promise<T>;

/** The kill switches' settings, for the config schema of every consumer service. */
export const consumerFaultSettings = {
  /** Test-only fault point: kill -9 the process after the first effect commits, before its offset does. */
  FAULT_KILL_AFTER_COMMIT: z.stringbool().default(false),
  /** Test-only fault point: kill -9 the process inside a chunk's transaction, after ≥ 2 effects, before COMMIT. */
  FAULT_KILL_MID_CHUNK: z.stringbool().default(false),
};

type ConsumerFaultConfig = { FAULT_KILL_AFTER_COMMIT: boolean; FAULT_KILL_MID_CHUNK: boolean };

/** For refuseFaultsUnlessAllowed: when each kill switch is on. */
export const consumerFaultSwitches: FaultSwitches<ConsumerFaultConfig> = {
  FAULT_KILL_AFTER_COMMIT: (config) => config.FAULT_KILL_AFTER_COMMIT,
  FAULT_KILL_MID_CHUNK: (config) => config.FAULT_KILL_MID_CHUNK,
};

/** A chunk's transaction returns each event's result; how many of them were applied. */
function appliedIn(result: unknown): number {
  return Array.isArray(result) ? result.filter((r: ChunkResult) => r === 'applied').length : 0;
}

const die = () => process.kill(process.pid, 'SIGKILL');

/**
 * The hooks the switches of `config` ask for, or none. FAULT_KILL_MID_CHUNK: kill -9 inside a
 * chunk's transaction once it applied two events or more, before COMMIT (a chunk dies whole).
 * FAULT_KILL_AFTER_COMMIT: kill -9 right after a chunk with an effect committed, before its offset
 * is committed (the redelivery applies nothing twice).
 */
export function consumerFaults(config: ConsumerFaultConfig): ConsumerFaults {
  const { FAULT_KILL_AFTER_COMMIT: afterCommit, FAULT_KILL_MID_CHUNK: midChunk } = config;
  if (!afterCommit && !midChunk) return {};
  return {
    transaction:
      <Tx>(transaction: Transaction<Tx>): Transaction<Tx> =>
      async (work) => {
        const result = await transaction(async (tx) => {
          const inner = await work(tx);
          if (midChunk && appliedIn(inner) >= 2) die();
          return inner;
        });
        if (afterCommit && appliedIn(result) > 0) die();
        return result;
      },
  };
}
