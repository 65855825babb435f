import { setTimeout as sleep } from 'node:timers/promises';

type ScheduleOptions = {
  /** Starts per second. Omitted: start as fast as `concurrency` allows (a burst). */
  rate?: number;
  /** At most this many tasks run at once. */
  concurrency: number;
  /** Stop after this many starts ... */
  count?: number;
  /** ... or once this much time has passed since the first start, whichever comes first. */
  durationMs?: number;
  /** Stops starting new tasks; the ones running are awaited. */
  signal?: AbortSignal;
  /** For tests; defaults to the monotonic clock. */
  now?: () => number;
};

export type ScheduleResult = {
  started: number;
  startedAt: number;
  /** When the last task started: starts per second are measured up to here, not to the last finish. */
  lastStartAt: number;
  finishedAt: number;
};

/**
 * Start `task(0)`, `task(1)`, ... at a steady rate, never more than `concurrency` at once.
 *
 * Task n is due at `start + n / rate`, computed from the elapsed time, not by sleeping a fixed
 * interval after each start: the time a start itself takes (or a wait for a free slot) does not
 * drift the schedule, and after a stall the generator catches up to the rate instead of quietly
 * sending less. Ignoring the requests a slow server "prevented" would hide exactly the latency a
 * load test is there to find (coordinated omission). `task` must not reject.
 */
export async function runScheduled(
  options: ScheduleOptions,
  task: (index: number) => Promise<void>,
): Promise<ScheduleResult> {
  const now = options.now ?? (() => performance.now());
  const { rate, concurrency, count, durationMs, signal } = options;
  if (count === undefined && durationMs === undefined && signal === undefined) {
    throw new Error('runScheduled needs a count, a duration or an abort signal to know when to stop');
  }
  const running = new Set<Promise<void>>();
  const startedAt = now();
  const timeIsUp = () => durationMs !== undefined && now() - startedAt >= durationMs;

  let index = 0;
  let lastStartAt = startedAt;
  while ((count === undefined || index < count) && !signal?.aborted) {
    if (rate !== undefined) {
      const dueIn = (index * 1000) / rate;
      // A task due at or after the end of the run is not started: at a steady rate the run starts
      // exactly duration × rate tasks, whatever the clock reads when a timer fires.
      if (durationMs !== undefined && dueIn >= durationMs) break;
      const due = startedAt + dueIn;
      // A timer may fire up to a millisecond early (libuv counts whole milliseconds), so sleep
      // again until the due time has really come.
      for (let wait = due - now(); wait > 0 && !signal?.aborted; wait = due - now()) {
        await sleep(wait, undefined, { signal }).catch(() => undefined);
      }
    }
    while (running.size >= concurrency) await Promise.race(running);
    if (signal?.aborted || timeIsUp()) break;
    lastStartAt = now();
    const started = task(index).finally(() => running.delete(started));
    running.add(started);
    index++;
  }
  await Promise.all(running);
  return { started: index, startedAt, lastStartAt, finishedAt: now() };
}
