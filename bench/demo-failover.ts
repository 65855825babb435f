/**
 * The demo's database failover as an operator tries it, then audited from outside: a PostgreSQL
 * primary and streaming standby (`npm run postgres-pair`'s), `./dev demo` pointed at it with the
 * standby wait given the documented way (`DATABASE_WAIT_FOR_STANDBY=any` in its environment), 30
 * orders/s, the standby's receipt paused, the primary killed with kill -9, the standby promoted, a
 * new standby built; once the system is quiet, every event topic is read from offset 0 and compared
 * with the promoted databases: an event whose outbox row is gone is a ghost.
 *
 *   node bench/demo-failover.ts [--help]
 *
 * `unguarded` runs the same without the wait, to show what it prevents. Not a test: it prints a
 * table and writes <out>.json and <out>.md with the revision, the CPU and the load average.
 */

import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPostgresPair } from '@outbox/devstack/postgres-pair';
import { markdownTableLinesOf } from '@outbox/devstack/table';
import { startDemo } from '@outbox/devstack/testing/demo-process';
import { auditGhosts } from '@outbox/devstack/testing/ghost-audit';
import { runLoad } from '@outbox/loadgen';
import pg from 'pg';
import { defineBench, oneOf, optional } from './support/bench.ts';
import { machineInfo } from './support/environment.ts';
import { resultsPath } from './support/results.ts';

const bench = defineBench({
  name: 'demo-failover',
  about:
    "The demo's database failover as an operator tries it, then audited from outside for ghost events " +
    '(events whose outbox row the promoted database lost).',
  options: {
    variant: oneOf('guarded', 'guarded waits for the standby (DATABASE_WAIT_FOR_STANDBY=any)', [
      'guarded',
      'unguarded',
    ]),
    out: optional(
      'prefix of the <out>.json and <out>.md written (default bench/results/demo-failover/demo-failover.<variant>)',
    ),
  },
});
const { variant } = bench.args;
const out = bench.args.out ?? resultsPath('demo-failover', variant);
const log = bench.log;
const RATE = 30;
const LOAD_MS = 40_000;
const PAUSE_AT_MS = 10_000;
const KILL_AT_MS = 16_000;

const revision = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
const pair = await startPostgresPair({ label: 'demo-failover-bench' });
const postgres = pair.url.replace(/\/postgres$/, '');
const databaseUrls = {
  orders: `${postgres}/orders`,
  inventory: `${postgres}/inventory`,
  billing: `${postgres}/billing`,
};
log(`pair up: primary :${pair.primary.port}, standby :${pair.standby?.port}, endpoint ${postgres}`);
const demo = await startDemo([], {
  DEMO_POSTGRES_URL: postgres,
  ...(variant === 'guarded' ? { DATABASE_WAIT_FOR_STANDBY: 'any' } : {}),
});
try {
  log('demo up; load starts');
  const started = Date.now();
  const load = runLoad({
    ordersUrl: demo.ordersUrl,
    rate: RATE,
    durationMs: LOAD_MS,
    mix: { valid: 100 },
    seed: 45,
  });
  const at = async (ms: number) => sleep(Math.max(0, ms - (Date.now() - started)));
  await at(PAUSE_AT_MS);
  await pair.pauseReceipt();
  log('standby receipt paused');
  await at(KILL_AT_MS);
  await pair.killPrimary();
  log('primary killed -9');
  await pair.promote();
  log('standby promoted');
  await pair.rebuildStandby();
  log('new standby streaming');
  const result = await load;
  const acknowledged = result.orders.flatMap((order) => (order.orderId ? [order.orderId] : []));
  log(`load done: ${acknowledged.length} acknowledged; waiting for the saga to settle`);
  await untilSettled(databaseUrls.orders);
  const audit = await auditGhosts(demo.kafkaBrokers, databaseUrls, acknowledged);
  const report = {
    benchmark: 'demo-failover',
    variant,
    revision,
    at: new Date().toISOString(),
    machine: machineInfo(),
    loadavg: bench.load(),
    setup: {
      postgres:
        'one primary and one asynchronous streaming standby holding orders, inventory and billing (tools/devstack postgresPair.ts)',
      demo: `./dev demo with DEMO_POSTGRES_URL=<the pair's endpoint>${variant === 'guarded' ? ' DATABASE_WAIT_FOR_STANDBY=any' : ''}`,
      load: `${RATE} orders/s for ${LOAD_MS / 1000} s, valid orders only`,
      faults: `standby receipt paused at ${PAUSE_AT_MS / 1000} s, primary kill -9 at ${KILL_AT_MS / 1000} s, promote, rebuild`,
    },
    acknowledged: acknowledged.length,
    audit,
  };
  const markdown = [
    `# The demo's database failover, audited (${variant})`,
    '',
    `Revision \`${revision}\`, ${report.at}; ${report.machine.cpuModel}, ${report.machine.cpus} cores; load average ${report.loadavg.before.join(' ')} before, ${report.loadavg.after.join(' ')} after.`,
    `${report.setup.demo}; ${report.setup.load}; ${report.setup.faults}.`,
    '',
    ...markdownTableLinesOf(audit.topics, {
      topic: (t) => t.topic,
      messages: (t) => t.messages,
      'ghost events': (t) => t.ghosts,
    }),
    '',
    `Acknowledged orders: ${acknowledged.length}; lost with the primary: ${audit.acknowledgedOrdersLost}, of them announced on order.events: ${audit.lostOrdersAnnounced}; orders left PENDING: ${audit.ordersUndecided}.`,
    '',
  ].join('\n');
  bench.write(report, markdown, 'off (DEMO_TRACING=off, demoProcess.ts)', out);
} finally {
  await demo.stop();
  await pair.remove();
}

/** Until no order is PENDING, or two minutes passed (an order left undecided stays so). */
async function untilSettled(url: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query<{ n: number }>(
      "select count(*)::int as n from orders where status = 'PENDING'",
    );
    await client.end();
    if (rows[0]?.n === 0) return;
    await sleep(1_000);
  }
}
