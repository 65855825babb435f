// What the demo runs on and where, read once from the environment and the command line. All
// optional: where PostgreSQL is (an embedded one starts when nothing answers there), and the
// ports, so a test can run a second demo beside a running one.
import { randomBytes } from 'node:crypto';
import { relayModes } from '@outbox/devstack/cdc-relays';
import { type ProcessName, RELAYS, SERVICES } from '@outbox/devstack/stack-plan';
import { kafkaClient } from '@outbox/runtime/config';
import { passOn } from './passOn.ts';
import { demoPassOnRules } from './passOnRules.ts';

/** A process of the demo: one of the stack's, or (on the cluster) its twin, `inventory-2`. */
export type DemoProcess = ProcessName | `${ProcessName}-2`;

export type DemoSettings = ReturnType<typeof readSettings>;

export function readSettings(env: NodeJS.ProcessEnv, argv: string[]) {
  const modes = orRefuse(() => relayModes(env));
  const basePort = Number(env.DEMO_BASE_PORT ?? 3000);
  // `./dev demo --cluster` (or DEMO_KAFKA=cluster): three brokers, topics replicated three times, a
  // kill -9 button per broker. One broker by default: lighter, and enough to show the outbox.
  const onCluster = argv.includes('--cluster') || env.DEMO_KAFKA === 'cluster';
  // On the cluster, two of everything that scales out, as in production: a second instance of each
  // service (the same consumer group: the partitions are shared between the two) and a second relay
  // per outbox (competing for the same rows).
  const twins: DemoProcess[] = onCluster ? [...SERVICES, ...RELAYS].map((name) => `${name}-2` as const) : [];
  return {
    configuredPostgres: (env.DEMO_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432').replace(/\/+$/, ''),
    embeddedAllowed: env.DEMO_EMBEDDED_POSTGRES !== 'off',
    kafkaPort: Number(env.KAFKA_PORT ?? 9092),
    onCluster,
    consolePort: Number(env.CONSOLE_PORT ?? 8080),
    prometheusPort: Number(env.PROMETHEUS_PORT ?? 9090),
    prometheusWanted: env.DEMO_PROMETHEUS !== 'off',
    zipkinPort: Number(env.ZIPKIN_PORT ?? 9411),
    tracingWanted: env.DEMO_TRACING !== 'off',
    connectPort: Number(env.CONNECT_PORT ?? 8083),
    // Each service's relay: polling (default) or debezium, a connector on Kafka Connect
    // (docs/design.md#polling-or-cdc). RELAY_MODE for all, RELAY_MODE_ORDERS etc. for one.
    modes,
    // The caller's settings for the apps (DATABASE_WAIT_FOR_STANDBY, timeouts, batch sizes…), to
    // the processes whose config takes them; the banner lists them (passOn.ts).
    passedOn: passOn(env, demoPassOnRules(modes)),
    // KAFKA_CLIENT for every service and relay, checked here so that a typo stops the demo once,
    // not each process (docs/dependencies.md#which-kafka-client). Unset: their default.
    kafkaClient: kafkaClientOrExit(env.KAFKA_CLIENT),
    twins,
    failover: failoverOf(env, argv, modes),
    ports: portsFrom(basePort, twins),
    // Links to dashboards, when a Grafana runs somewhere, and to each order's trace.
    grafanaUrl: env.GRAFANA_URL,
    traceUrlTemplate: env.TRACE_URL_TEMPLATE,
    // Every admin action of the console needs this token; the relays' redrive endpoint needs the other.
    consoleToken: env.CONSOLE_ADMIN_TOKEN ?? randomBytes(16).toString('hex'),
    relayToken: randomBytes(16).toString('hex'),
    // Orders' PUT /admin/write-mode, which only the demo's orders has (WRITE_MODES_SWITCHABLE).
    ordersToken: randomBytes(16).toString('hex'),
  };
}

/**
 * `./dev demo --failover` (or DEMO_FAILOVER=async|sync): every service database on a primary and a
 * streaming standby, asynchronous unless `--sync`. With an asynchronous standby the relays and
 * consumers wait for it before announcing, as docs/production.md#database-failover asks, unless
 * `--no-standby-wait` or DEMO_STANDBY_WAIT=off (to see what the wait prevents); with a synchronous
 * one there is nothing to wait for.
 */
function failoverOf(env: NodeJS.ProcessEnv, argv: string[], modes: ReturnType<typeof relayModes>) {
  const wanted = argv.includes('--failover') || env.DEMO_FAILOVER !== undefined;
  if (!wanted) return undefined;
  if (env.DEMO_FAILOVER !== undefined && !['async', 'sync'].includes(env.DEMO_FAILOVER))
    refuse(`DEMO_FAILOVER=${env.DEMO_FAILOVER}: expected async or sync`);
  if (Object.values(modes).includes('debezium'))
    refuse(
      '--failover runs polling relays only: a replication slot does not follow a promotion (docs/production.md)',
    );
  const replication: 'async' | 'sync' =
    argv.includes('--sync') || env.DEMO_FAILOVER === 'sync' ? 'sync' : 'async';
  const waitOff = argv.includes('--no-standby-wait') || env.DEMO_STANDBY_WAIT === 'off';
  return { replication, standbyWait: replication === 'async' && !waitOff };
}

/** A setting the demo cannot run with: it says which, and stops before starting anything. */
export function refuse(message: string): never {
  console.error(message);
  process.exit(2);
}

/** What `read` returns, or the demo stopped with the message it threw. */
export function orRefuse<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    return refuse(error instanceof Error ? error.message : String(error));
  }
}

function kafkaClientOrExit(value: string | undefined) {
  if (value === undefined) return undefined;
  const parsed = kafkaClient.safeParse(value);
  return parsed.success
    ? parsed.data
    : refuse(`KAFKA_CLIENT=${value}: expected kafkajs or platformatic (unset: kafkajs)`);
}

function portsFrom(basePort: number, twins: DemoProcess[]) {
  const ports: Partial<Record<DemoProcess, number>> & Record<ProcessName, number> = {
    orders: basePort + 1,
    'relay-orders': basePort + 2,
    inventory: basePort + 3,
    billing: basePort + 4,
    'relay-inventory': basePort + 5,
    'relay-billing': basePort + 6,
    ...Object.fromEntries(twins.map((name, i) => [name, basePort + 7 + i])),
  };
  return ports;
}
