import { describe, expect, it } from 'vitest';
import type { Snapshot } from './invariants/index.ts';
import { longestStretch, measurePartitionWindows } from './partitionWindows.ts';
import type { TopicMessage } from './topics.ts';

const T = 1_000_000;
const topic = 'order.events';

/** A snapshot with only what the measure reads: the events' partitions and when inventory applied them. */
function snapshotOf(applied: { partition: number; at: number }[]): Snapshot {
  const messages: TopicMessage[] = applied.map(({ partition }, i) => ({
    topic,
    partition,
    offset: i,
    key: `order-${i}`,
    eventId: `event-${i}`,
    type: 'ORDER_CREATED',
    deadLetteredBy: undefined,
  }));
  const processed = applied.map(({ at }, i) => ({
    event_id: `event-${i}`,
    event_type: 'ORDER_CREATED',
    processed_at: new Date(at),
  }));
  return {
    topics: {
      events: { orders: topic, inventory: 'reservation.events', billing: 'payment.events' },
      deadLetters: [],
    },
    messages: new Map([[topic, messages]]),
    processed: { orders: [], inventory: processed, billing: [] },
  } as unknown as Snapshot;
}

describe('the figures per member (partitionWindows.ts)', () => {
  it('measures the staying partitions alone: a pause of the moved ones does not count', () => {
    // Partition 0 stays and is applied every 200 ms; partition 1 moves and waits 5 s.
    const applied = [
      ...Array.from({ length: 100 }, (_, i) => ({ partition: 0, at: T - 10_000 + i * 200 })),
      { partition: 1, at: T - 100 },
      { partition: 1, at: T + 5_000 },
    ];
    const [figure] = measurePartitionWindows(
      [
        {
          kind: 'staying',
          group: 'inventory',
          label: 'x',
          fromMs: T,
          toMs: T + 6_000,
          partitions: [`${topic}/0`],
          moved: 1,
        },
      ],
      snapshotOf(applied),
    );
    expect(figure?.longestWithoutApplyingMs).toBe(200);
    expect(figure?.beforeMs).toBe(200);
    expect(figure).toMatchObject({ partitions: 1, moved: 1, windowMs: 6_000 });
  });

  it('counts a stretch under way at the fault from the event before it, and one still open at the end', () => {
    expect(longestStretch([T - 300, T + 100, T + 200], T, T + 1_000)).toBe(800);
    expect(longestStretch([T - 300, T + 900], T, T + 1_000)).toBe(1_200);
    expect(longestStretch([], T, T + 1_000)).toBe(1_000);
  });

  it('takes a killed member’s partitions as consumed again when the last of them is', () => {
    const applied = [
      { partition: 2, at: T - 50 },
      { partition: 2, at: T + 31_000 },
      { partition: 3, at: T + 33_500 },
      { partition: 4, at: T + 1_000 },
    ];
    const takeover = (partitions: number[], toMs: number) =>
      measurePartitionWindows(
        [
          {
            kind: 'takeover',
            group: 'inventory',
            label: 'x',
            fromMs: T,
            toMs,
            partitions: partitions.map((p) => `${topic}/${p}`),
            sessionTimeoutMs: 30_000,
          },
        ],
        snapshotOf(applied),
      )[0];
    expect(takeover([2, 3], T + 40_000)?.consumedAgainAfterMs).toBe(33_500);
    // One of them had nothing applied within the window: not consumed again, said so.
    expect(takeover([2, 3], T + 32_000)?.consumedAgainAfterMs).toBeNull();
    expect(takeover([2, 3], T + 40_000)).toMatchObject({ partitions: 2, sessionTimeoutMs: 30_000 });
  });
});
