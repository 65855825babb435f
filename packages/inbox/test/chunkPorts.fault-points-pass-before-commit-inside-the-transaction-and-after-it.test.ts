import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChunkPorts } from '../src/applyChunk.ts';
import type { ChunkResult } from '../src/chunk.ts';
import { firstCopyOf } from '../src/dedup.ts';
import { type FaultHooks, faultHooks, withFaultPoints } from '../src/faultPoints.ts';

// The chunk step (applyChunk.ts) calls its ports and has no fault code; the chaos suite's fault
// points are a decorator on those ports (faultPoints.ts). What the kill switches rely on: the
// before-COMMIT point passes inside the transaction once its work returned, the after-COMMIT one
// once the transaction resolved and before the chunk step hears of it (so before the offsets),
// neither for a chunk that rolled back. The chaos scenarios consumer-kill-mid-chunk,
// consumer-kill-after-commit and broken-build-dedup-off run the same decorator in real consumers,
// killed for real.

type Tx = { name: 'tx' };
const done = (...results: ChunkResult[]) => results.map((result) => ({ result }));

/** A transaction that logs BEGIN and COMMIT around its work, or fails its COMMIT when told. */
function fakePorts(calls: string[], failCommit = false): ChunkPorts<Tx> {
  return {
    dedupCheck: firstCopyOf,
    transaction: async (work) => {
      calls.push('BEGIN');
      try {
        const answer = await work({ name: 'tx' });
        if (failCommit) throw new Error('COMMIT failed');
        calls.push('COMMIT');
        return answer;
      } catch (err) {
        calls.push('ROLLBACK');
        throw err;
      }
    },
  };
}

function recordingHooks(calls: string[]): FaultHooks {
  return {
    dedup: (check) => check,
    beforeCommit: (results) => calls.push(`before COMMIT: ${results.join(',')}`),
    afterCommit: (results) => calls.push(`after COMMIT: ${results.join(',')}`),
  };
}

describe('the chunk step ports: fault points as a decorator', () => {
  it('passes before COMMIT inside the transaction, after its work, and after COMMIT before the caller hears of it', async () => {
    const calls: string[] = [];
    const ports = withFaultPoints(fakePorts(calls), recordingHooks(calls));

    const answer = await ports.transaction(async (tx) => {
      calls.push(`work in ${tx.name}`);
      return done('applied', 'duplicate', 'applied');
    });
    calls.push('caller');

    expect(answer).toEqual(done('applied', 'duplicate', 'applied'));
    expect(calls).toEqual([
      'BEGIN',
      'work in tx',
      'before COMMIT: applied,duplicate,applied',
      'COMMIT',
      'after COMMIT: applied,duplicate,applied',
      'caller',
    ]);
  });

  it('passes no after-COMMIT point for a chunk that rolled back, nor a before-COMMIT one for failed work', async () => {
    const calls: string[] = [];
    const failedCommit = withFaultPoints(fakePorts(calls, true), recordingHooks(calls));
    await expect(failedCommit.transaction(async () => done('applied'))).rejects.toThrow('COMMIT failed');
    expect(calls).toEqual(['BEGIN', 'before COMMIT: applied', 'ROLLBACK']);

    calls.length = 0;
    const ports = withFaultPoints(fakePorts(calls), recordingHooks(calls));
    await expect(ports.transaction(() => Promise.reject(new Error('handler failed')))).rejects.toThrow(
      'handler failed',
    );
    expect(calls).toEqual(['BEGIN', 'ROLLBACK']);
  });
});

describe('the kill switches on the chunk step ports', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** The calls, with each kill -9 the process would have taken in its place. */
  function killsRecorded(calls: string[]) {
    vi.spyOn(process, 'kill').mockImplementation((pid, signal) => {
      calls.push(`kill ${signal} ${pid === process.pid ? 'self' : pid}`);
      return true;
    });
  }

  it('wraps nothing when no switch is on', () => {
    expect(faultHooks({})).toBeUndefined();
    expect(faultHooks({ killAfterCommit: false, killMidChunk: false, inboxDedup: true })).toBeUndefined();
  });

  it('killMidChunk: kill -9 before COMMIT once a chunk applied two events, not one', async () => {
    const calls: string[] = [];
    killsRecorded(calls);
    const ports = withFaultPoints(fakePorts(calls), faultHooks({ killMidChunk: true }) as FaultHooks);

    await ports.transaction(async () => done('applied', 'duplicate', 'ignored'));
    expect(calls).toEqual(['BEGIN', 'COMMIT']);

    calls.length = 0;
    await ports.transaction(async () => done('applied', 'duplicate', 'applied'));
    expect(calls).toEqual(['BEGIN', 'kill SIGKILL self', 'COMMIT']);
  });

  it('killAfterCommit: kill -9 after COMMIT once a chunk applied an event, not for duplicates only', async () => {
    const calls: string[] = [];
    killsRecorded(calls);
    const ports = withFaultPoints(fakePorts(calls), faultHooks({ killAfterCommit: true }) as FaultHooks);

    await ports.transaction(async () => done('duplicate', 'ignored'));
    expect(calls).toEqual(['BEGIN', 'COMMIT']);

    calls.length = 0;
    await ports.transaction(async () => done('duplicate', 'applied'));
    expect(calls).toEqual(['BEGIN', 'COMMIT', 'kill SIGKILL self']);
  });

  it('inboxDedup false: every event is new, even one recorded before or twice in the chunk', () => {
    const hooks = faultHooks({ inboxDedup: false }) as FaultHooks;
    const broken = withFaultPoints(fakePorts([]), hooks).dedupCheck(new Set(['a']));
    expect(['a', 'a', 'b'].map(broken)).toEqual([true, true, true]);

    const kept = withFaultPoints(fakePorts([]), recordingHooks([])).dedupCheck(new Set(['a']));
    expect(['a', 'a', 'b'].map(kept)).toEqual([true, false, false]);
  });
});
