import type { WriteMode } from '@outbox/contracts';
import type { Scenario, ScenarioContext } from '../scenario.ts';
import { brokerOutage } from './support.ts';

/** Every n-th order's transaction fails right before COMMIT (orders' FAULT_FAIL_COMMIT_EVERY). */
const FAIL_COMMIT_EVERY = 10;
/** orders kills itself between the two writes of this order (FAULT_KILL_BETWEEN_WRITES_AT); not a multiple of the above. */
const KILL_AT = 45;
const BROKER_DOWN_MS = 3_000;
/** orders' consumer group session (KAFKA_SESSION_TIMEOUT_MS), shorter than the 30 s default. */
const SESSION_TIMEOUT_MS = 10_000;

const EXPECTATIONS: Record<WriteMode, string> = {
  'commit-then-publish':
    'The checker FAILS no-lost-or-ghost-orders with LOST events: orders committed while the broker was away, ' +
    'and the one committed just before the kill, never get their ORDER_CREATED; they stay PENDING.',
  'publish-then-commit':
    'The checker FAILS no-lost-or-ghost-orders with GHOST events: ORDER_CREATED sent for transactions that then ' +
    'failed or died before COMMIT; inventory reserves and billing charges orders that do not exist.',
  outbox:
    'Nothing lost, nothing invented: a failed or killed transaction takes its outbox row with it, and what ' +
    'committed is published once the broker is back. Every invariant holds.',
};

/**
 * The naive dual writes next to the outbox, on the same system, under the same load and the same
 * faults: the broker killed under load, the transaction failing after the order's write (after the
 * send, for publish-then-commit), and the orders process killed between its two writes (for the
 * outbox: after COMMIT, where commit-then-publish would send). Only orders'
 * WRITE_MODE differs between the three scenarios, so their figures form one table
 * (docs/chaos.md, "What the outbox prevents").
 */
function dualWriteScenario(writeMode: WriteMode): Scenario {
  return {
    name: `dual-write-${writeMode}`,
    breaks:
      `orders writes with WRITE_MODE=${writeMode}; under load it is killed (kill -9) between the two writes of its ` +
      `${KILL_AT}th order while the broker is killed for ${BROKER_DOWN_MS / 1000} s, and every ${FAIL_COMMIT_EVERY}th ` +
      `transaction fails right before COMMIT (orders' group session: ${SESSION_TIMEOUT_MS / 1000} s)`,
    expectation: EXPECTATIONS[writeMode],
    writeMode,
    needs: { ownBroker: true },
    stack: {
      env: {
        orders: {
          FAULT_FAIL_COMMIT_EVERY: String(FAIL_COMMIT_EVERY),
          FAULT_KILL_BETWEEN_WRITES_AT: String(KILL_AT),
          // The killed orders' member holds its group's rebalance until its session ends, counted
          // again from the broker's restart: 10 s instead of 30 s ends each run 20 s sooner. What
          // these runs compare is what was lost or invented, not how soon a group takes over.
          KAFKA_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
        },
      },
    },
    load: { rate: 30, durationMs: 10_000 },
    quiescenceTimeoutMs: 60_000,
    // Side by side, to keep the run short: the broker outage, and orders' kill and restart.
    inject: async (context) => {
      await Promise.all([
        brokerOutage(context, {
          afterMs: 2_000,
          downMs: BROKER_DOWN_MS,
          how: 'kill -9 the broker',
          back: 'start the broker again',
        }),
        ordersKilledBetweenWrites(context),
      ]);
    },
  };
}

/** orders kills itself at its KILL_AT-th order (FAULT_KILL_BETWEEN_WRITES_AT); start it again without the fault. */
async function ordersKilledBetweenWrites(context: ScenarioContext): Promise<void> {
  const orders = context.stack.process('orders');
  const exited = await Promise.race([orders.exited(), context.sleep(30_000).then(() => undefined)]);
  if (!exited)
    throw new Error(`orders did not reach its ${KILL_AT}th order within 30 s: the fault never fired`);
  context.fault(`orders killed itself between the two writes of its ${KILL_AT}th order (${exited.signal})`);
  await context.stack.restart('orders', { FAULT_KILL_BETWEEN_WRITES_AT: '0' });
  context.restored('orders restarted without the kill');
}

/** Run by name or as `dual-writes` (not part of `all`: the naive ones must FAIL). */
export const DUAL_WRITES: Scenario[] = [
  dualWriteScenario('commit-then-publish'),
  dualWriteScenario('publish-then-commit'),
  dualWriteScenario('outbox'),
];
