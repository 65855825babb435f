// Figures per member of a consumer group, measured after the run from the checker's own data: each
// applied event's partition (from the topics) and when its consumer applied it (processed_events'
// processed_at, in the same transaction as its effect). The scenario names the partitions and the
// stretch (which member held what, from the group coordinator: groupMembers.ts); the databases say
// when each partition was applied. The progress watch (progressWatch.ts) can only see a whole group.
import type { Snapshot } from './invariants/index.ts';
import type { DatabaseName } from './stack.ts';

/** The stretch before a fault that sets what an ordinary pause is on the same partitions. */
const BASELINE_MS = 10_000;

/** A stretch the scenario asks the checker to measure on some partitions of one consumer group. */
export type PartitionWindow = {
  /**
   * `staying`: the partitions a member kept while another left its group or joined it again; it
   * should apply them throughout. `takeover`: the partitions of a member killed with kill -9; the others
   * apply them again once the group drops it.
   */
  kind: 'staying' | 'takeover';
  group: DatabaseName;
  /** What happened, e.g. `inventory-2 stopped (SIGTERM) and started again`. */
  label: string;
  /** The fault (the stop, the kill), epoch ms. */
  fromMs: number;
  /** The group settled again (each partition held by a live member), epoch ms. */
  toMs: number;
  /** Each as `topic/partition`. */
  partitions: string[];
  /** `staying`: the group's other partitions, which moved between the members (not measured). */
  moved?: number;
  /** `takeover`: the session timeout of the group, after which it drops a silent member. */
  sessionTimeoutMs?: number;
};

/** A window's figures, as the report gives them. */
export type PartitionFigure = Omit<PartitionWindow, 'partitions' | 'fromMs' | 'toMs'> & {
  partitions: number;
  /** From the fault until the group settled again. */
  windowMs: number;
  /** `staying`: the longest stretch overlapping the window in which no event of those partitions was applied. */
  longestWithoutApplyingMs?: number;
  /** `staying`: the same over the 10 s before the fault, for comparison. */
  beforeMs?: number;
  /**
   * `takeover`: from the kill until every one of the partitions had an event applied again (the
   * last of them to start again); null when one had none before the window ended.
   */
  consumedAgainAfterMs?: number | null;
};

/** Every window's figures from the snapshot the invariants read. */
export function measurePartitionWindows(windows: PartitionWindow[], snapshot: Snapshot): PartitionFigure[] {
  const partitionOf = new Map<string, string>();
  for (const topic of Object.values(snapshot.topics.events))
    for (const message of snapshot.messages.get(topic) ?? [])
      if (message.eventId) partitionOf.set(message.eventId, `${message.topic}/${message.partition}`);
  return windows.map((window) => {
    const wanted = new Set(window.partitions);
    const applied = new Map<string, number[]>();
    for (const row of snapshot.processed[window.group]) {
      const partition = partitionOf.get(row.event_id);
      if (!partition || !wanted.has(partition) || !row.processed_at) continue;
      const times = applied.get(partition) ?? [];
      times.push(row.processed_at.getTime());
      applied.set(partition, times);
    }
    const { partitions, fromMs, toMs, ...rest } = window;
    const figure: PartitionFigure = { ...rest, partitions: partitions.length, windowMs: toMs - fromMs };
    if (window.kind === 'staying' && partitions.length > 0) {
      const all = [...applied.values()].flat().sort((a, b) => a - b);
      figure.longestWithoutApplyingMs = longestStretch(all, fromMs, toMs);
      figure.beforeMs = longestStretch(all, fromMs - BASELINE_MS, fromMs);
    } else if (window.kind === 'takeover') {
      figure.consumedAgainAfterMs = consumedAgainAfter(partitions, applied, fromMs, toMs);
    }
    return figure;
  });
}

/**
 * The longest stretch without an applied event that overlaps [from, to]: the one under way at
 * `from` counts from the last event before it; the whole window when nothing was applied.
 */
export function longestStretch(sortedTimes: number[], from: number, to: number): number {
  if (sortedTimes.length === 0) return to - from;
  let previous = from;
  for (const at of sortedTimes) if (at <= from) previous = at;
  let longest = 0;
  for (const at of sortedTimes) {
    if (at <= from || at > to) continue;
    longest = Math.max(longest, at - previous);
    previous = at;
  }
  return Math.max(longest, to - previous);
}

/** From `from` until the last of the partitions had an event applied after it; null if one had none by `to`. */
function consumedAgainAfter(
  partitions: string[],
  applied: Map<string, number[]>,
  from: number,
  to: number,
): number | null {
  let last = 0;
  for (const partition of partitions) {
    const first = Math.min(...(applied.get(partition) ?? []).filter((at) => at > from));
    if (!Number.isFinite(first) || first > to) return null;
    last = Math.max(last, first - from);
  }
  return last;
}
