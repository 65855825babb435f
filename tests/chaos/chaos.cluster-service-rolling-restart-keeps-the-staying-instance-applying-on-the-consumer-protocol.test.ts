import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, expect, it } from 'vitest';
import { expectEveryInvariantHeld, runChaosScenario } from './support.ts';

useLeakGuard();

/**
 * The longest a partition the staying instance kept may stand still while its twin leaves and comes
 * back, on the consumer protocol: no rebalance stops it, so only the machine does (a 2-core host
 * starting a process beside it). The classic protocol's rebalances stop every member for seconds.
 */
const STAYING_PAUSE_MS = 5_000;

describe('chaos on a three-broker cluster, every consumer on the consumer group protocol (KIP-848): one instance of each service restarted in turn, then killed', () => {
  it('the instance that stays keeps applying its partitions; a killed one’s wait for its session to time out, then move', {
    timeout: 600_000,
  }, async () => {
    const report = await runChaosScenario('cluster-service-rolling-restart', {}, 'platformatic', 'consumer');
    expectEveryInvariantHeld(report);
    expect(report.groupProtocol).toBe('consumer');
    const figures = report.partitionWindows ?? [];
    const staying = figures.filter((figure) => figure.kind === 'staying');
    const takeovers = figures.filter((figure) => figure.kind === 'takeover');
    // Each restart twice: while the group went on without the instance, and while it took it back.
    expect(staying.map((figure) => figure.group)).toEqual([
      'inventory',
      'inventory',
      'billing',
      'billing',
      'orders',
      'orders',
    ]);
    expect(takeovers.map((figure) => figure.group)).toEqual(['inventory', 'billing', 'orders']);
    for (const figure of staying) {
      expect(figure.partitions, `${figure.group}: partitions the staying member kept`).toBeGreaterThan(0);
      expect(figure.longestWithoutApplyingMs, `${figure.group}: ${figure.label}`).toBeLessThanOrEqual(
        STAYING_PAUSE_MS,
      );
    }
    for (const figure of takeovers) {
      const session = figure.sessionTimeoutMs ?? 0;
      expect(session, 'the broker’s group.consumer.session.timeout.ms').toBeGreaterThan(0);
      expect(figure.partitions, `${figure.group}: partitions of the killed member`).toBeGreaterThan(0);
      // Nobody applies them while the group still counts the dead member in: its session runs from
      // its last heartbeat, at most one interval (3 s) before the kill. After it, the coordinator
      // hands them over at the survivor's next heartbeats.
      expect(figure.consumedAgainAfterMs, `${figure.group}: ${figure.label}`).toBeGreaterThanOrEqual(
        session - 5_000,
      );
      expect(figure.consumedAgainAfterMs, `${figure.group}: ${figure.label}`).toBeLessThanOrEqual(
        session + 30_000,
      );
    }
  });
});
