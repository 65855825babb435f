import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect } from 'vitest';

/** Handles that mean a test left something running: sockets, servers, child processes. */
const WATCHED = new Set(['TCPSocketWrap', 'TCPServerWrap', 'PipeWrap', 'ProcessWrap', 'TTYWrap']);

function watchedHandles(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) {
    if (WATCHED.has(type)) counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return counts;
}

function leaksSince(baseline: Map<string, number>): string[] {
  return [...watchedHandles()]
    .filter(([type, count]) => count > (baseline.get(type) ?? 0))
    .map(([type, count]) => `${type}: ${count - (baseline.get(type) ?? 0)} more than before the tests`);
}

/**
 * Fail the test file if it leaves a pool, client, consumer, server or child process running.
 * Call once at the top of a test file; register it BEFORE the file's own afterAll hooks, so it
 * runs after them (vitest runs afterAll hooks in reverse order of registration).
 */
export function useLeakGuard(graceMs = 5_000): void {
  let baseline = new Map<string, number>();
  beforeAll(() => {
    baseline = watchedHandles();
  });
  afterAll(async () => {
    // Closed sockets disappear on a later tick; give them a moment before calling it a leak.
    const deadline = Date.now() + graceMs;
    let leaks = leaksSince(baseline);
    while (leaks.length > 0 && Date.now() < deadline) {
      await sleep(100);
      leaks = leaksSince(baseline);
    }
    expect(leaks, 'resources left open by this test file').toEqual([]);
  });
}
