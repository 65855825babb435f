import type { Scenario, ScenarioContext } from '../scenario.ts';

/**
 * Far above what the system accepts on a 2-core machine: the orders API must shed all run long.
 * With its default pool the API accepts about as much as a load generator sharing those two cores
 * can offer (300 to 600 orders/s when quiet, docs/performance.md), so here its pool is 6
 * connections, 4 admission slots: a smaller capacity, the same admission and the same shedding.
 * The load generator cannot start them all: a shed order waits out its Retry-After in one of its
 * `concurrency` slots, so retries and new orders share them.
 */
const RATE = 600;
const DURATION_MS = 20_000;
const POOL_SIZE = 6;

export const overload: Scenario = {
  name: 'overload',
  breaks: `${RATE} valid orders/s offered for ${DURATION_MS / 1000} s, far above what the system accepts (the orders API's pool ${POOL_SIZE} connections)`,
  expectation:
    'The orders API admits what its connection pool can serve and refuses the rest at once with 503 ' +
    'overloaded and Retry-After, before any work: accepted orders are committed with their event and ' +
    'decided as usual, shed ones leave nothing behind, and clients that retry after Retry-After with ' +
    'the same Idempotency-Key create each order at most once.',
  stack: { env: { orders: { DATABASE_POOL_SIZE: String(POOL_SIZE) } } },
  load: {
    rate: RATE,
    durationMs: DURATION_MS,
    mix: { valid: 1 },
    concurrency: 512,
    // Wait out Retry-After (1 s) plus a jittered backoff, a few times, as a client should; then
    // give up on the order.
    retry: { attempts: 3, baseDelayMs: 500, maxDelayMs: 1_000 },
  },
  inject: async (context) => {
    context.fault(`${RATE} orders/s offered`);
    await context.sleep(DURATION_MS);
    context.restored(`load over; the orders API's own figures: ${await serverSide(context)}`);
  },
};

/**
 * What the orders API says of the run on /metrics, where the client's clock cannot blur it: the
 * requests it shed by reason, and the share of POST /orders it answered (201 or 503) within 50 ms.
 */
async function serverSide(context: ScenarioContext): Promise<string> {
  const text = await (await fetch(`${context.stack.process('orders').url}/metrics`)).text();
  const value = (name: string, ...labels: string[]) =>
    text
      .split('\n')
      .filter((line) => line.startsWith(`${name}{`) && labels.every((label) => line.includes(label)))
      .reduce((sum, line) => sum + Number(line.split(' ')[1]), 0);
  const post = ['method="POST"', 'route="/orders"'];
  const all = value('http_request_duration_seconds_count', ...post);
  const within = (le: string) =>
    `${((100 * value('http_request_duration_seconds_bucket', `le="${le}"`, ...post)) / Math.max(1, all)).toFixed(1)}%`;
  const shed = (reason: string) => value('http_admission_shed_total', `reason="${reason}"`);
  const lagMs = (name: string) => `${Math.round(1000 * value(name, ''))} ms`;
  return (
    `shed ${shed('expected_wait')} (on arrival) + ${shed('queue_full')} (queue full) + ${shed('queue_timeout')} (queue timeout); ` +
    `of ${all} POST /orders, ${within('0.05')} answered within 50 ms, ${within('1')} within 1 s; ` +
    `event loop lag over the last second: p50 ${lagMs('nodejs_eventloop_lag_p50_seconds')}, p99 ${lagMs('nodejs_eventloop_lag_p99_seconds')}`
  );
}
