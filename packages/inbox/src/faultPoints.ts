import type { FaultSwitches } from '@outbox/runtime/config';
import { z } from 'zod';
import type { ChunkPorts } from './applyChunk.ts';
import type { ChunkResult } from './chunk.ts';
import type { NewEventCheck } from './dedup.ts';

// The consumers' kill switches, which the chaos suite uses to prove that a crash at the worst
// moment of a chunk loses and doubles nothing, and the broken dedup its checker must catch. They
// live apart from the consumer loop and the chunk step: an app passes them in at start-up
// (ConsumerServiceOptions.faults), which makes them the hooks below (EventConsumerOptions.faults),
// put once on the chunk step's ports (withFaultPoints); production passes nothing, and its config
// refuses the switches unless OUTBOX_ALLOW_FAULTS allows them.

/** A consumer's test-only switches, as the app's config gives them. Never set in production. */
export type ConsumerFaultSwitches = {
  /**
   * kill -9 this process right after the first chunk that applied an event commits, before its
   * offset is committed. Proves a redelivery after a crash applies nothing twice.
   */
  killAfterCommit?: boolean;
  /**
   * kill -9 this process inside a chunk's transaction once it applied two events or more, before
   * COMMIT. Proves a chunk dies whole: nothing of it is kept, all of it is applied once after
   * the restart.
   */
  killMidChunk?: boolean;
  /**
   * false still records each event but runs its effect even when it was applied before: the bug
   * the dedup exists to prevent, built on purpose so that the chaos suite can show its invariant
   * checker catches a double effect (docs/chaos.md). Default true.
   */
  inboxDedup?: boolean;
};

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

/** The switches a consumer service's config turns on (ConsumerServiceOptions.faults). */
export function consumerFaults(config: ConsumerFaultConfig): ConsumerFaultSwitches {
  return { killAfterCommit: config.FAULT_KILL_AFTER_COMMIT, killMidChunk: config.FAULT_KILL_MID_CHUNK };
}

/** The points in a chunk where the switches act; withFaultPoints puts them on the chunk step's ports. */
export type FaultHooks = {
  /** The dedup check the chunk applies: production's own, or (`inboxDedup: false`) one that calls every event new. */
  dedup(check: NewEventCheck): NewEventCheck;
  /** Inside the chunk's transaction, its effects done, before COMMIT. */
  beforeCommit(results: readonly ChunkResult[]): void;
  /** The chunk's transaction committed; its offsets are not committed yet. */
  afterCommit(results: readonly ChunkResult[]): void;
};

const applied = (results: readonly ChunkResult[]) => results.filter((r) => r === 'applied').length;
const kill = () => process.kill(process.pid, 'SIGKILL');

/**
 * The hooks of the switches, or none when no switch is on: then the chunk step's ports are not
 * wrapped at all, and a consumer started with the switches off runs exactly as production's.
 */
export function faultHooks(switches: ConsumerFaultSwitches): FaultHooks | undefined {
  if (!switches.killMidChunk && !switches.killAfterCommit && switches.inboxDedup !== false) return undefined;
  return {
    dedup: (check) => (switches.inboxDedup === false ? () => true : check),
    beforeCommit: (results) => {
      if (switches.killMidChunk && applied(results) >= 2) kill();
    },
    afterCommit: (results) => {
      if (switches.killAfterCommit && applied(results) >= 1) kill();
    },
  };
}

/**
 * The chunk step's ports with the fault points on them, so that the step reads as production runs
 * it. `beforeCommit` runs inside the transaction once its work returned: a kill there must leave
 * nothing of the chunk. `afterCommit` runs once the transaction resolved, before the chunk step
 * hands its results back to the Kafka loop, which commits the offsets only after that: a kill
 * there makes the broker redeliver events already applied.
 */
export function withFaultPoints<Tx>(ports: ChunkPorts<Tx>, faults: FaultHooks): ChunkPorts<Tx> {
  const { transaction, dedupCheck } = ports;
  const resultsOf = (done: readonly { result: ChunkResult }[]) => done.map((d) => d.result);
  return {
    dedupCheck: (fresh) => faults.dedup(dedupCheck(fresh)),
    transaction: async (work) => {
      const done = await transaction(async (tx) => {
        const done = await work(tx);
        faults.beforeCommit(resultsOf(done));
        return done;
      });
      faults.afterCommit(resultsOf(done));
      return done;
    },
  };
}
