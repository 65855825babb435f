import type { ClaimedRow, OutboxStore } from '@outbox/outbox';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import { describe, expect, it } from 'vitest';
import { withFaultPoints } from '../src/engine/faultPoints.ts';
import { createRelayMetrics, timedPublisher, timedStore } from '../src/engine/metrics.ts';
import type { OutgoingEvent, Publisher } from '../src/engine/publisher.ts';

// The relay's loop calls its two ports and nothing else (engine/relay.ts); the step timings and the
// chaos suite's fault points are decorators on those ports. What the loop relies on: the ack fault
// point passes before the relay hears of the ack (so before its mark), the pipelined-claim point
// only for a claim that returns rows while a publish is with the broker, and each port call timed
// under its step. The chaos scenarios relay-crash-after-publish and relay-kill-9-pipelined run the
// same decorators in a real relay process, killed for real.

const row = (id: string) => ({ id }) as ClaimedRow;
const event = { topic: 't' } as unknown as OutgoingEvent;

/** A store whose claims answer what the test queues; the decorators touch nothing else. */
function fakeStore(claims: ClaimedRow[][]): OutboxStore {
  return {
    claimBatch: async () => claims.shift() ?? [],
    markAndClaim: async () => ({ marked: new Set<string>(), rows: claims.shift() ?? [] }),
    markPublished: async (ids: string[]) => ({ ids: new Set(ids), unblocked: 0 }),
    outboxStats: async () => ({ pending: 0, inFlight: 0, failed: 0, oldestUnpublishedSeconds: 0 }),
  } as unknown as OutboxStore;
}

/** A publisher whose publishes the test resolves or rejects by hand. */
function heldPublisher() {
  const waiting: { resolve: () => void; reject: (err: Error) => void }[] = [];
  const publisher: Publisher = {
    publish: () =>
      new Promise<void>((resolve, reject) => {
        waiting.push({ resolve, reject });
      }),
  };
  return { publisher, waiting };
}

function recordingHooks() {
  const calls: string[] = [];
  return {
    calls,
    hooks: {
      afterBrokerAck: (count: number) => calls.push(`ack ${count}`),
      pipelinedClaim: (count: number) => calls.push(`pipelined ${count}`),
    },
  };
}

describe('the relay ports: fault points and step timings as decorators', () => {
  it('passes the ack fault point once the broker acknowledged, before the caller hears of it, and not for a refused publish', async () => {
    const { publisher, waiting } = heldPublisher();
    const { calls, hooks } = recordingHooks();
    const ports = withFaultPoints({ store: fakeStore([]), publisher }, hooks);

    const acked = ports.publisher.publish([event, event]).then(() => calls.push('caller sees the ack'));
    await Promise.resolve();
    expect(calls).toEqual([]); // still with the broker
    waiting[0]?.resolve();
    await acked;
    expect(calls).toEqual(['ack 2', 'caller sees the ack']);

    const refused = ports.publisher.publish([event]);
    waiting[1]?.reject(new Error('refused'));
    await expect(refused).rejects.toThrow('refused');
    expect(calls).toEqual(['ack 2', 'caller sees the ack']);
  });

  it('passes the pipelined-claim fault point only for a claim that returns rows while a publish is with the broker', async () => {
    const { publisher, waiting } = heldPublisher();
    const { calls, hooks } = recordingHooks();
    const store = fakeStore([[row('a')], [row('b'), row('c')], [], [row('d')]]);
    const ports = withFaultPoints({ store, publisher }, hooks);

    await ports.store.claimBatch('relay', 1000, 10); // nothing with the broker
    const sending = ports.publisher.publish([event]);
    await ports.store.claimBatch('relay', 1000, 10); // two rows, a batch with the broker
    await ports.store.markAndClaim('relay', 1000, 10, []); // nothing claimed
    waiting[0]?.resolve();
    await sending;
    await ports.store.markAndClaim('relay', 1000, 10, []); // the broker answered
    expect(calls).toEqual(['pipelined 2', 'ack 1']);
  });

  it('times each claim (alone or with a mark) as claim, each mark as mark and each publish as publish', async () => {
    const store = fakeStore([[row('a')], [row('b')]]);
    const metrics = createRelayMetrics(createMetricsRegistry('relay-ports-test'), store);
    const timed = timedStore(store, metrics);
    const publisher = timedPublisher({ publish: async () => {} }, metrics);

    await timed.claimBatch('relay', 1000, 10);
    await timed.markAndClaim('relay', 1000, 10, ['a']);
    await timed.markPublished(['b'], 'relay');
    await publisher.publish([event]);

    const counts = Object.fromEntries(
      (await metrics.stepDuration.get()).values
        .filter((value) => value.metricName === 'outbox_relay_batch_duration_seconds_count')
        .map((value) => [value.labels.step, value.value]),
    );
    expect(counts).toEqual({ claim: 2, mark: 1, publish: 1 });
  });
});
