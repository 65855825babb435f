import type { ChunkResult } from './chunk.ts';

/**
 * A consumer's test-only switches, as the apps' config gives them (FAULT_KILL_AFTER_COMMIT,
 * FAULT_KILL_MID_CHUNK, INBOX_DEDUP): the chaos suite uses them to prove what the consumer
 * promises. Never set in production.
 */
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

/** The points in a chunk where the switches act; with none set, they do nothing. */
export type ConsumerFaults = {
  /** Whether an event recorded before is skipped (false only with `inboxDedup: false`). */
  dedup: boolean;
  /** Inside the chunk's transaction, its effects done, before COMMIT. */
  beforeCommit(results: readonly ChunkResult[]): void;
  /** The chunk's transaction committed; its offsets are not committed yet. */
  afterCommit(results: readonly ChunkResult[]): void;
};

const applied = (results: readonly ChunkResult[]) => results.filter((r) => r === 'applied').length;
const kill = () => process.kill(process.pid, 'SIGKILL');

export function consumerFaults(switches: ConsumerFaultSwitches = {}): ConsumerFaults {
  return {
    dedup: switches.inboxDedup !== false,
    beforeCommit: (results) => {
      if (switches.killMidChunk && applied(results) >= 2) kill();
    },
    afterCommit: (results) => {
      if (switches.killAfterCommit && applied(results) >= 1) kill();
    },
  };
}
