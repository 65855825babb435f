/**
 * Where each test file runs, and how long it may take: the one table the suite's time is kept in.
 *
 * `./dev test` (what CI runs) must fit 40 minutes of tests on a 2-core machine with every fault
 * class in it: broker, relay and consumer kills, a group coordinator's death, a frozen broker or
 * two brokers down, Kafka Connect killed, a relay mode switch, a guarded database failover and
 * the naive dual writes. Files listed in LONG_TIER leave that run for `./dev test --long`, each
 * with the file that keeps its fault class in the default run.
 *
 * After every run the durations reporter fails the run for a file over its budget: the figure
 * below, or DEFAULT_BUDGET_SECONDS. A budget is about twice the file's time in the committed run
 * (bench/results/test-suite/test-suite.*.md), so a slow host passes and a file that doubles does not.
 */

const CHAOS = 'tests/chaos';

/** Seconds a file may take when the table below does not name it. */
export const DEFAULT_BUDGET_SECONDS = 90;

/**
 * Seconds a file may take, for files slower than the default allows: about twice what each took
 * in a run of its tier on a busy 2-core machine (load average 15 to 38), the compose smoke with
 * room for a first image build.
 */
export const BUDGETS: Readonly<Record<string, number>> = {
  [`${CHAOS}/chaos.cluster-service-rolling-restart-keeps-the-staying-instance-applying-on-the-consumer-protocol.test.ts`]: 900,
  'tests/compose/compose.confirms-an-order-placed-in-the-console.test.ts': 600,
  'apps/console/test/console.live-charts-alerts-and-traces.test.ts': 330,
  [`${CHAOS}/chaos.checker-catches-lost-and-ghost-events-of-naive-dual-writes.test.ts`]: 250,
  'tests/compose/compose.cdc-publishes-and-marks-every-row.test.ts': 280,
  [`${CHAOS}/chaos.postgres-failover-of-every-database-announces-nothing-it-lost.test.ts`]: 230,
  'tests/compose/compose.grafana-panels-evaluate-on-the-compose-prometheus.test.ts': 200,
  'tests/consumers/consumers.survive-kill-9-between-commit-and-offset-commit.test.ts': 190,
  'apps/relay/test/publisher.acknowledged-means-in-the-log-through-a-leader-kill.test.ts': 170,
  [`${CHAOS}/chaos.survives-consumer-kill-9-mid-chunk.test.ts`]: 170,
  'tests/observability/observability.alerts-fire-while-the-broker-is-down.test.ts': 170,
  'apps/relay/test/relay.renews-every-lease-it-holds-behind-a-slow-broker.test.ts': 160,
  [`${CHAOS}/chaos.survives-consumer-kill-9-between-commit-and-offset-commit.test.ts`]: 160,
  'apps/console/test/console.broker-outage-from-the-controls.test.ts': 150,
  'apps/console/test/console.database-failover-of-all-three-from-the-controls.test.ts': 150,
  'apps/console/test/console.naive-write-loses-orders-the-outbox-does-not.test.ts': 150,
  [`${CHAOS}/chaos.cluster-keeps-applying-through-a-group-coordinator-kill-on-platformatic.test.ts`]: 150,
  [`${CHAOS}/chaos.survives-broker-stopped-longer-than-producer-timeouts.test.ts`]: 150,
  [`${CHAOS}/chaos.cluster-survives-two-brokers-down.test.ts`]: 140,
  'apps/orders/test/saga.replies-of-an-order-fetched-together-apply-in-one-transaction.test.ts': 130,
  'tests/consumers/consumers.combine-partitions-chunks-and-dead-letter-poison-alone.test.ts': 130,
  [`${CHAOS}/chaos.cdc-connector-registered-under-load-strands-no-row.test.ts`]: 120,
  [`${CHAOS}/chaos.cluster-keeps-applying-through-a-group-coordinator-kill.test.ts`]: 120,
  [`${CHAOS}/chaos.cluster-survives-the-busiest-leader-killed.test.ts`]: 120,
  'tests/consumers/consumers.dead-letters-in-the-log-through-a-leader-kill.test.ts': 120,
  'tests/contracts/kafka.client-connects-with-the-tls-and-sasl-settings.test.ts': 120,
  'tests/tracing/tracing.trace-read-back-from-zipkin.test.ts': 120,
  // 46 s with two cases (test-suite.default); a third, the consumer group protocol, adds about half.
  'tests/contracts/kafka.both-clients-keep-the-group-member-contract.test.ts': 140,
  'tools/devstack/test/demo.fresh-machine-embedded-postgres-and-closed-pipe.test.ts': 120,
  [`${CHAOS}/chaos.checker-catches-a-consumer-without-dedup.test.ts`]: 110,
  [`${CHAOS}/chaos.survives-consumer-restart-loop.test.ts`]: 110,
  'tests/consumers/consumers.apply-each-event-once-when-redelivered.test.ts': 110,
  'tools/devstack/test/postgresPair.streams-promotes-and-loses-only-unreplicated-commits.test.ts': 110,
  'apps/console/test/console.connect-killed-and-started-from-the-controls.test.ts': 100,
  'apps/console/test/console.order-timeline-shows-where-the-time-went.test.ts': 100,
  'tests/cdc/cdc.strands-no-row-when-the-mode-or-the-slot-changes.test.ts': 100,
  [`${CHAOS}/chaos.survives-competing-relays-killed-repeatedly.test.ts`]: 100,
  'tests/e2e/e2e.stack-runs-through-pgbouncer-in-session-mode.test.ts': 100,
  'tools/devstack/test/zipkin.survives-the-demo-span-rate-and-is-restarted.test.ts': 100,
};

/**
 * Every fault class and the file that rehearses it in `./dev test`: a test fails when one of these
 * is missing or moved to the long tier (tests/architecture).
 */
export const FAULT_CLASSES: Readonly<Record<string, string>> = {
  'broker killed': `${CHAOS}/chaos.survives-broker-kill-9.test.ts`,
  'relay killed': `${CHAOS}/chaos.survives-relay-crash-between-broker-ack-and-mark.test.ts`,
  'consumer killed': `${CHAOS}/chaos.survives-consumer-kill-9-between-commit-and-offset-commit.test.ts`,
  'group coordinator killed, default client': `${CHAOS}/chaos.cluster-keeps-applying-through-a-group-coordinator-kill.test.ts`,
  'two brokers down': `${CHAOS}/chaos.cluster-survives-two-brokers-down.test.ts`,
  'Kafka Connect killed': `${CHAOS}/chaos.cdc-survives-connect-kill-9.test.ts`,
  'relay switched between polling and CDC':
    'tests/cdc/cdc.strands-no-row-when-the-mode-or-the-slot-changes.test.ts',
  'database failover, asynchronous and guarded': `${CHAOS}/chaos.postgres-failover-async-announces-no-order-it-lost.test.ts`,
  'naive dual writes': `${CHAOS}/chaos.checker-catches-lost-and-ghost-events-of-naive-dual-writes.test.ts`,
  'poison events': `${CHAOS}/chaos.dead-letters-poison-without-blocking-other-events.test.ts`,
  'the checker catches a broken consumer': `${CHAOS}/chaos.checker-catches-a-consumer-without-dedup.test.ts`,
};

/**
 * Files that run only in `./dev test --long`: a second rehearsal of a fault class the default run
 * already has. Each names the file that keeps its class in `./dev test`.
 */
export const LONG_TIER: Readonly<Record<string, string>> = {
  [`${CHAOS}/chaos.cdc-recovers-a-failed-connector-task.test.ts`]:
    'Kafka Connect failing: chaos.cdc-survives-connect-kill-9',
  [`${CHAOS}/chaos.cluster-keeps-applying-through-a-group-coordinator-kill-on-platformatic.test.ts`]:
    'coordinator kill: the same scenario on the default client; both clients keep tests/contracts/kafka.both-clients-keep-the-group-member-contract',
  [`${CHAOS}/chaos.cluster-service-rolling-restart-keeps-the-staying-instance-applying-on-the-consumer-protocol.test.ts`]:
    'a consumer killed: chaos.survives-consumer-kill-9-between-commit-and-offset-commit; the consumer protocol’s member: tests/contracts/kafka.both-clients-keep-the-group-member-contract and kafka.consumer-protocol-member-reads-a-partition-given-back-from-the-committed-offset',
  [`${CHAOS}/chaos.cluster-survives-the-busiest-leader-killed.test.ts`]:
    'a broker killed: chaos.survives-broker-kill-9; on three brokers: chaos.cluster-survives-two-brokers-down',
  [`${CHAOS}/chaos.dead-letters-poison-after-decode-without-blocking.test.ts`]:
    'poison events: chaos.dead-letters-poison-without-blocking-other-events, consumers.dead-letter-events-the-database-would-refuse',
  [`${CHAOS}/chaos.dead-letters-poison-in-the-middle-of-a-chunk.test.ts`]:
    'poison events: chaos.dead-letters-poison-without-blocking-other-events, consumers.apply-chunks-poison-alone-transient-retried',
  [`${CHAOS}/chaos.sheds-load-beyond-capacity.test.ts`]:
    'overload: apps/orders post-orders.sheds-load-beyond-the-admission-limit and post-orders.adaptive-admission-queues-a-burst-and-refuses-fast',
  [`${CHAOS}/chaos.survives-a-slow-payment-provider.test.ts`]:
    'a slow provider: apps/billing billing.slow-provider-holds-no-transaction-open',
  [`${CHAOS}/chaos.survives-broker-stopped-longer-than-producer-timeouts.test.ts`]:
    'the broker away: chaos.survives-broker-kill-9',
  [`${CHAOS}/chaos.survives-competing-relays-killed-repeatedly.test.ts`]:
    'a relay killed: chaos.survives-relay-crash-between-broker-ack-and-mark; several relays: relay.publishes-in-aggregate-order-with-three-relays',
  [`${CHAOS}/chaos.survives-consumer-kill-9-mid-chunk.test.ts`]:
    'a consumer killed: chaos.survives-consumer-kill-9-between-commit-and-offset-commit',
  [`${CHAOS}/chaos.survives-consumer-restart-loop.test.ts`]:
    'a consumer killed: chaos.survives-consumer-kill-9-between-commit-and-offset-commit',
  [`${CHAOS}/chaos.survives-postgres-restart.test.ts`]:
    'the database away: orders-api.answers-503-while-the-database-is-down, relay.reports-degraded-when-its-database-black-holes',
  [`${CHAOS}/chaos.survives-relay-database-connections-dropped.test.ts`]:
    'the database away: relay.reports-degraded-when-its-database-black-holes',
  [`${CHAOS}/chaos.survives-relay-kill-9-mid-batch.test.ts`]:
    'a relay killed: chaos.survives-relay-crash-between-broker-ack-and-mark, relay.redelivers-after-kill-9',
  [`${CHAOS}/chaos.survives-relay-kill-9-with-a-pipelined-batch-in-flight.test.ts`]:
    'a relay killed: chaos.survives-relay-crash-between-broker-ack-and-mark, relay.redelivers-after-kill-9',
  [`${CHAOS}/chaos.survives-slow-broker.test.ts`]:
    'a slow broker: relay.renews-every-lease-it-holds-behind-a-slow-broker',
  'apps/console/test/console.live-charts-alerts-and-traces.test.ts':
    'the same PromQL, alerts and traces: tests/observability (the alerts fire while the broker is down), tracing.trace-read-back-from-zipkin',
  'apps/console/test/console.naive-write-loses-orders-the-outbox-does-not.test.ts':
    'the dual writes: chaos.checker-catches-lost-and-ghost-events-of-naive-dual-writes',
  'apps/relay/test/publisher.acknowledged-means-in-the-log-through-a-leader-kill.test.ts':
    'brokers lost under load: chaos.cluster-survives-two-brokers-down, chaos.survives-broker-kill-9',
  'tests/consumers/consumers.survive-kill-9-between-commit-and-offset-commit.test.ts':
    'its twin under load with every invariant checked: chaos.survives-consumer-kill-9-between-commit-and-offset-commit',
  [`${CHAOS}/chaos.cdc-connector-registered-under-load-strands-no-row.test.ts`]:
    'a connector registered late: tests/cdc/cdc.marks-published-only-rows-the-slot-streams',
  [`${CHAOS}/chaos.postgres-failover-of-every-database-announces-nothing-it-lost.test.ts`]:
    'a database failover: chaos.postgres-failover-async-announces-no-order-it-lost (the orders database)',
  'apps/console/test/console.database-failover-of-all-three-from-the-controls.test.ts':
    'a database failover: chaos.postgres-failover-async-announces-no-order-it-lost',
  'tests/consumers/consumers.dead-letters-in-the-log-through-a-leader-kill.test.ts':
    'a dead letter in the log before the offset moves: consumers.dead-letter-in-the-log-before-moving-past-it',
  'tests/compose/compose.confirms-an-order-placed-in-the-console.test.ts':
    'the compose file itself: tests/compose/dockerCompose.is-valid-and-complete (the stack needs Docker and builds its images); the order form in Chromium: apps/console/test/console.order-form-drives-the-saga',
  'tests/compose/compose.cdc-publishes-and-marks-every-row.test.ts':
    'the debezium relay marks what the slot streams: tests/cdc, relay.sees-the-slot-reader-only-with-pg-read-all-stats',
  'tests/compose/compose.grafana-panels-evaluate-on-the-compose-prometheus.test.ts':
    'every panel and alert on a real Prometheus: tests/observability/observability.prometheus-evaluates-dashboards-and-alerts',
  'apps/relay/test/relay.renews-every-lease-it-holds-behind-a-slow-broker.test.ts':
    'a slow broker: relay.renews-its-lease-during-a-slow-publish',
  'tests/e2e/e2e.survives-broker-kill-9.test.ts': 'a broker killed: chaos.survives-broker-kill-9',
  'apps/relay/test/relay.survives-broker-kill-9.test.ts':
    'a broker killed: chaos.survives-broker-kill-9 (the relay among the whole stack); the relay alone behind a broker that fails: relay.keeps-its-broker-backoff-when-notified',
  'apps/console/test/console.connect-killed-and-started-from-the-controls.test.ts':
    'Kafka Connect killed: chaos.cdc-survives-connect-kill-9; the console controls: console.broker-outage-from-the-controls',
  'apps/console/test/console.consumer-killed-and-restarted-from-the-controls.test.ts':
    'a consumer killed: chaos.survives-consumer-kill-9-between-commit-and-offset-commit; the console controls: console.broker-outage-from-the-controls',
  'tests/e2e/e2e.stack-runs-through-pgbouncer-in-session-mode.test.ts':
    'the database behind a pooler: no other file; every process reaches PostgreSQL through the same pools (packages/runtime)',
  'tools/devstack/test/zipkin.survives-the-demo-span-rate-and-is-restarted.test.ts':
    'Zipkin restarted: tools/devstack zipkinSupervisor.restarts-then-gives-up',
};

/**
 * Files that run one at a time, after the others: they kill processes, hold load for a window or
 * time a delay, and a second test beside them on two cores would make them slow or flaky.
 */
export const ALONE: readonly string[] = [
  `${CHAOS}/*.test.ts`,
  'tests/e2e/*.test.ts',
  // The compose stack is one project on the machine's one Docker: two files would share it.
  'tests/compose/compose.*.test.ts',
  'tests/cdc/*.test.ts',
  'tests/consumers/*.test.ts',
  'tests/observability/*.test.ts',
  'tests/contracts/kafka.*.test.ts',
  'apps/console/test/console.*.test.ts',
  'apps/relay/test/relay.*.test.ts',
  'apps/relay/test/publisher.*.test.ts',
  'apps/orders/test/post-orders.sheds-load-beyond-the-admission-limit.test.ts',
  'apps/orders/test/post-orders.adaptive-admission-queues-a-burst-and-refuses-fast.test.ts',
  'apps/billing/test/billing.voids-a-backlog-a-few-calls-at-a-time.test.ts',
  'apps/billing/test/billing.slow-provider-holds-no-transaction-open.test.ts',
  'apps/inventory/test/inventory.fails-fast-on-a-locked-or-silent-database.test.ts',
  'packages/runtime/test/standbyWait.*.test.ts',
  'tools/devstack/test/*.test.ts',
  'tools/devstack/src/*Supervisor.*.test.ts',
  'tools/loadgen/test/runLoad.agrees-with-the-databases.test.ts',
  'tools/loadgen/test/cli.prints-summary-and-writes-json.test.ts',
  'tools/loadgen/test/scheduler.holds-steady-rate.test.ts',
];
