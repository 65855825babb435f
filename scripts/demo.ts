// The local demo without Docker: `./dev demo` (or `npm run demo` once set up).
// Starts the project's own Kafka broker, then the four apps against the local PostgreSQL (an
// embedded one when none answers; each service creates and migrates its own database), the web
// console (with the demo's stop / kill -9 / start controls, which only this script can offer
// because only it owns the processes), Zipkin (the services export their traces to it), and
// Prometheus when it is installed. Prints the logs (read
// from the services' log files, so printing never slows a service) and the URLs, and stops
// everything it started on Ctrl-C.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { styleText } from 'node:util';
import { configSchema } from '@outbox/console/config';
import { type RunningConsole, startConsole } from '@outbox/console/console';
import type { DemoControls, ProcessControl } from '@outbox/console/demo-controls';
import { brokerControl, ordersWriteModeSwitch, serviceControl } from '@outbox/console/process-controls';
import { topicFor } from '@outbox/contracts';
import { relayModes, startCdcRelays } from '@outbox/devstack/cdc-relays';
import type { ConnectWorker } from '@outbox/devstack/connect-worker';
import {
  type EmbeddedPostgres,
  probePostgres,
  startEmbeddedPostgres,
} from '@outbox/devstack/embedded-postgres';
import { KafkaBroker } from '@outbox/devstack/kafka-broker';
import { KafkaCluster } from '@outbox/devstack/kafka-cluster';
import { createTopicsQuietly, waitForCoordinators } from '@outbox/devstack/kafka-probe';
import { isPortInUse } from '@outbox/devstack/ports';
import { DEMO_PROMETHEUS_INTERVAL_SECONDS, demoPrometheusConfig } from '@outbox/devstack/prometheus-config';
import { type ServiceProcess, startService, startTogether } from '@outbox/devstack/service-process';
import { type ProcessName, planStack, RELAYS, SERVICES } from '@outbox/devstack/stack-plan';
import { MissingToolError } from '@outbox/devstack/tools';
import { ZipkinServer } from '@outbox/devstack/zipkin-server';
import { superviseZipkin, type ZipkinSupervisor } from '@outbox/devstack/zipkin-supervisor';
import { deadLetterTopic } from '@outbox/inbox';
import { loadConfig } from '@outbox/runtime/config';
import { fixKafkajsIdleTimerLoop } from '@outbox/runtime/kafka';
import { createLogger } from '@outbox/runtime/logger';

// Settings, all optional: where PostgreSQL is (an embedded one starts when nothing answers there),
// and the ports, so a test can run a second demo beside a running one.
const configuredPostgres = (process.env.DEMO_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432').replace(
  /\/+$/,
  '',
);
const embeddedAllowed = process.env.DEMO_EMBEDDED_POSTGRES !== 'off';
const kafkaPort = Number(process.env.KAFKA_PORT ?? 9092);
// `./dev demo --cluster` (or DEMO_KAFKA=cluster): three brokers, topics replicated three times, a
// kill -9 button per broker. One broker by default: lighter, and enough to show the outbox.
const onCluster = process.argv.includes('--cluster') || process.env.DEMO_KAFKA === 'cluster';
const consolePort = Number(process.env.CONSOLE_PORT ?? 8080);
const basePort = Number(process.env.DEMO_BASE_PORT ?? 3000);
const prometheusPort = Number(process.env.PROMETHEUS_PORT ?? 9090);
const prometheusWanted = process.env.DEMO_PROMETHEUS !== 'off';
const zipkinPort = Number(process.env.ZIPKIN_PORT ?? 9411);
const tracingWanted = process.env.DEMO_TRACING !== 'off';
// Each service's relay: polling (default) or debezium, a connector on Kafka Connect
// (docs/design.md#polling-or-cdc). RELAY_MODE for all, RELAY_MODE_ORDERS etc. for one.
const modes = (() => {
  try {
    return relayModes(process.env);
  } catch (error) {
    console.error(String(error instanceof Error ? error.message : error));
    process.exit(2);
  }
})();
const connectPort = Number(process.env.CONNECT_PORT ?? 8083);
/** A process of the demo: one of the stack's, or (on the cluster) its twin, `inventory-2`. */
type DemoProcess = ProcessName | `${ProcessName}-2`;
// On the cluster, two of everything that scales out, as in production: a second instance of each
// service (the same consumer group: the partitions are shared between the two) and a second relay
// per outbox (competing for the same rows).
const twins: DemoProcess[] = onCluster ? [...SERVICES, ...RELAYS].map((name) => `${name}-2` as const) : [];
const ports: Partial<Record<DemoProcess, number>> & Record<ProcessName, number> = {
  orders: basePort + 1,
  'relay-orders': basePort + 2,
  inventory: basePort + 3,
  billing: basePort + 4,
  'relay-inventory': basePort + 5,
  'relay-billing': basePort + 6,
  ...Object.fromEntries(twins.map((name, i) => [name, basePort + 7 + i])),
};
const colors = {
  orders: 'cyan',
  'relay-orders': 'magenta',
  inventory: 'green',
  'relay-inventory': 'magenta',
  billing: 'yellow',
  'relay-billing': 'magenta',
  console: 'blue',
  prometheus: 'gray',
  zipkin: 'gray',
  postgres: 'gray',
} as const;
// Every admin action of the console needs this token; the relays' redrive endpoint needs the other.
const consoleToken = process.env.CONSOLE_ADMIN_TOKEN ?? randomBytes(16).toString('hex');
const relayToken = randomBytes(16).toString('hex');
// Orders' PUT /admin/write-mode, which only the demo's orders has (WRITE_MODES_SWITCHABLE below).
const ordersToken = randomBytes(16).toString('hex');

// Output that outlives its reader. `./dev demo | head -5` closes the pipe after five lines; a
// write then fails with EPIPE, which would crash the demo and leave the broker, PostgreSQL and the
// services (each in its own process group) running. Instead the demo goes on silently, and
// Ctrl-C still stops everything it started.
const open = { stdout: true, stderr: true };
for (const name of ['stdout', 'stderr'] as const) {
  process[name].on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    open[name] = false;
  });
}
function print(text: string): void {
  if (open.stdout) process.stdout.write(`${text}\n`);
}
function printError(text: string): void {
  if (open.stderr) process.stderr.write(`${styleText('red', text)}\n`);
  else print(text);
}

/** One readable line per JSON log line: time, service, level, message, then the details. */
function printLine(name: string, line: string): void {
  if (!open.stdout) return; // nobody reads: do not even parse
  let text = line;
  try {
    const { time, level, msg, service: _s, name: _n, pid: _p, hostname: _h, ...rest } = JSON.parse(line);
    const when = new Date(time).toISOString().slice(11, 23);
    const details = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : '';
    const label =
      level >= 50 ? styleText('red', 'ERROR') : level >= 40 ? styleText('yellow', 'WARN ') : 'INFO ';
    text = `${styleText('dim', when)} ${label} ${msg}${styleText('dim', details)}`;
  } catch {
    // not JSON (a stack trace, say): print as is
  }
  const color = colors[name.replace(/-2$/, '') as keyof typeof colors] ?? 'white';
  print(`${styleText(color, name.padEnd(15))} │ ${text}`);
}

/** A line of the demo's own, in the same shape as the services' log lines. */
function say(name: string, msg: string): void {
  printLine(name, JSON.stringify({ time: Date.now(), level: 30, msg }));
}

let stopping = false;
let broker: KafkaBroker | KafkaCluster | undefined;
let startedBroker = false;
let embeddedPostgres: EmbeddedPostgres | undefined;
let consoleApp: RunningConsole | undefined;
let prometheus: ChildProcess | undefined;
let zipkin: ZipkinServer | undefined;
let zipkinStarting: Promise<ZipkinServer | undefined> | undefined;
let zipkinSupervisor: ZipkinSupervisor | undefined;
let connect: ConnectWorker | undefined;
const services: Partial<Record<DemoProcess, ServiceProcess>> = {};

/** Stops what this demo started, newest first, then exits. A second Ctrl-C exits at once. */
async function stopAll(exitCode: number): Promise<never> {
  if (stopping) process.exit(1);
  stopping = true;
  print('\nStopping the console and the services…');
  await consoleApp?.close().catch(() => {});
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus?.once('exit', resolve));
    prometheus.kill('SIGTERM');
    await exited;
  }
  await Promise.allSettled(Object.values(services).map((service) => service.stop()));
  // After the services: their last spans are flushed to it on shutdown.
  zipkinSupervisor?.stop();
  if (connect) {
    // Its connectors and replication slots stay: the next run goes on where this one stopped.
    print('Stopping Kafka Connect… (its replication slots stay and hold WAL until the next run)');
    await connect.stop().catch((error) => printError(`Could not stop Kafka Connect: ${String(error)}`));
  }
  const zipkinToStop = zipkin ?? (await zipkinStarting);
  await zipkinToStop?.stop().catch((error) => printError(`Could not stop Zipkin: ${String(error)}`));
  if (broker && startedBroker) {
    print('Stopping Kafka…');
    await broker.stop().catch((error) => printError(`Could not stop Kafka: ${String(error)}`));
  }
  if (embeddedPostgres) {
    print('Stopping the embedded PostgreSQL…');
    await embeddedPostgres.stop();
  }
  process.exit(exitCode);
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));
process.on('SIGHUP', () => void stopAll(0)); // the terminal went away
// Whatever goes wrong, nothing this demo started is left running.
process.on('uncaughtException', (error) => {
  printError(error instanceof MissingToolError ? error.message : String(error));
  void stopAll(1);
});

/** A missing prerequisite or a start-up failure: one plain line, no stack trace, then stop. */
async function fail(error: unknown): Promise<never> {
  printError(error instanceof MissingToolError ? `missing: ${error.message}` : String(error));
  return stopAll(1);
}

/**
 * PostgreSQL: the configured (or default) server when one answers; otherwise, on this machine, an
 * embedded one on the same port with its data under .local/ (docs/dependencies.md).
 */
async function choosePostgres(): Promise<string> {
  const probe = await probePostgres(`${configuredPostgres}/postgres`);
  if (probe.state === 'up') return configuredPostgres;
  const url = new URL(configuredPostgres);
  const local = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (probe.state === 'error') {
    throw new Error(
      `PostgreSQL at ${url.host} refused the demo (${probe.message}). Set DEMO_POSTGRES_URL to a superuser URL, e.g. postgresql://postgres:secret@127.0.0.1:5432`,
    );
  }
  if (!local || !embeddedAllowed) {
    throw new MissingToolError(
      `no PostgreSQL answers at ${url.host}. Start one (Debian: apt-get install -y postgresql) or point DEMO_POSTGRES_URL at one${local ? ', or unset DEMO_EMBEDDED_POSTGRES to let the demo run its own' : ''}.`,
    );
  }
  const port = Number(url.port || 5432);
  print(`No PostgreSQL answers at ${url.host}: starting an embedded one there (data in .local/)…`);
  embeddedPostgres = await startEmbeddedPostgres({ port });
  print(`PostgreSQL (embedded) is ready at ${embeddedPostgres.url} (log: ${embeddedPostgres.logFile})`);
  return embeddedPostgres.url;
}

/**
 * Zipkin, the trace backend: spawned first, because its JVM boots while the broker does, and
 * awaited before the services start, so their first spans have somewhere to go. Without it the
 * demo runs on with tracing off and says why; nothing else depends on it.
 */
async function startZipkin(): Promise<ZipkinServer | undefined> {
  if (!tracingWanted) return undefined;
  const server = new ZipkinServer({ port: zipkinPort });
  print(`Starting Zipkin on 127.0.0.1:${zipkinPort} (first run downloads its jar with Maven)…`);
  try {
    await server.start();
    return server;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    say('zipkin', `not started, traces are off: ${reason}`);
    return undefined;
  }
}

async function zipkinReady(server: ZipkinServer | undefined): Promise<ZipkinServer | undefined> {
  if (!server) return undefined;
  try {
    await server.waitUntilReady(90_000);
    return server;
  } catch (error) {
    say('zipkin', `did not start (see ${server.logFile}); traces are off: ${String(error).split('\n')[0]}`);
    await server.stop().catch(() => {});
    return undefined;
  }
}

let postgres = configuredPostgres;
try {
  postgres = await choosePostgres();
  fixKafkajsIdleTimerLoop(); // the broker's readiness probe uses kafkajs
  broker = onCluster
    ? new KafkaCluster({ name: 'cluster' })
    : new KafkaBroker({
        name: kafkaPort === 9092 ? 'demo' : `demo-${kafkaPort}`,
        port: kafkaPort,
        controllerPort: kafkaPort + 1,
      });
  startedBroker = !broker.isRunning();
  if (startedBroker) {
    print(
      onCluster
        ? 'Starting a three-broker Kafka cluster on 127.0.0.1:19192, 19292, 19392 (first run resolves the jars with Maven)…'
        : `Starting Kafka on 127.0.0.1:${kafkaPort} (first run resolves the jars with Maven)…`,
    );
    await broker.start();
  }
  // Zipkin's JVM boots while the broker does. (After broker.start(): two Maven downloads at once,
  // on a fresh machine, would share one local repository.)
  zipkinStarting = startZipkin();
  const readyMs = await broker.waitUntilReady(onCluster ? 240_000 : 120_000);
  await waitForCoordinators(broker.brokers, SERVICES);
  // The services' own topics and dead-letter topics, at the services' default partition count (6).
  const topics = ['order', 'reservation', 'payment'].map((aggregate) => topicFor(aggregate));
  await createTopicsQuietly(broker.brokers, [...topics, ...topics.map(deadLetterTopic)], {
    partitions: 6,
    replicationFactor: onCluster ? 3 : 1,
  });
  print(`Kafka is ready at ${broker.brokers.join(',')} (${(readyMs / 1000).toFixed(1)} s)`);
  zipkin = await zipkinReady(await zipkinStarting);
  if (zipkin) {
    print(
      `Zipkin is ready at ${zipkin.url} (keeps the newest ${zipkin.maxSpans} spans in a ${zipkin.heapMb} MiB heap)`,
    );
    // If it dies (it should not: its bound fits its heap, docs/tracing.md), it is started again.
    zipkinSupervisor = superviseZipkin(zipkin, { report: (message) => say('zipkin', message) });
  }
} catch (error) {
  await fail(error);
}
if (!broker) throw new Error('unreachable: fail() exits');
const kafka = broker;

const databaseUrls = {
  orders: `${postgres}/orders`,
  inventory: `${postgres}/inventory`,
  billing: `${postgres}/billing`,
};
const plans = planStack({
  databaseUrls,
  kafkaBrokers: kafka.brokers,
  ...(onCluster ? { kafkaReplicationFactor: 3 } : {}),
  // The console's write-mode switch and the chaos buttons need the demo switches, which every
  // app refuses unless told otherwise.
  allowFaults: 'demo',
  relayModes: modes,
  connectUrl: `http://127.0.0.1:${connectPort}`,
  extraEnv: Object.fromEntries(
    [...SERVICES, ...RELAYS].map((name) => [
      name,
      {
        // Loopback only: the demo's API, ops endpoints and the relays' admin endpoint are for this machine.
        HOST: '127.0.0.1',
        ...(RELAYS.includes(name) ? { RELAY_ADMIN_TOKEN: relayToken } : {}),
        // The console may switch orders to a naive dual write and back (docs/walkthrough.md, step 7).
        ...(name === 'orders' ? { WRITE_MODES_SWITCHABLE: 'true', ORDERS_ADMIN_TOKEN: ordersToken } : {}),
        // Tracing on, in the demo only (tests and benchmarks run without it): every span to Zipkin.
        ...zipkin?.tracingEnv(name),
      },
    ]),
  ),
});
const start = async (name: DemoProcess) => {
  const own = name.replace(/-2$/, '') as ProcessName;
  const plan = plans[own];
  // A twin relay leases under its own id: two relays under one id would fence each other off nothing.
  const env = name !== own && own.startsWith('relay-') ? { ...plan.env, RELAY_ID: name } : plan.env;
  services[name] = await startService(plan.app, env, {
    port: ports[name] ?? 0,
    label: 'demo',
    name,
    onLine: printLine,
  });
  return services[name];
};

/** What the console's buttons do, announced in the terminal too, so the logs that follow make sense. */
function announced(name: string, control: ProcessControl): ProcessControl {
  const step = (what: string, action: () => Promise<void>) => async () => {
    say('console', `${what} ${name} (from the console)`);
    await action();
  };
  return {
    isRunning: control.isRunning,
    stop: step('stopping', control.stop),
    kill: step('kill -9 of', control.kill),
    start: step('starting', control.start),
  };
}

const controls: DemoControls = {
  brokers:
    kafka instanceof KafkaCluster
      ? Object.fromEntries(
          kafka.nodes.map((node) => {
            const id = node.cluster?.nodeId;
            return [`broker-${id}`, announced(`Kafka broker ${id}`, brokerControl(node))];
          }),
        )
      : { broker: announced('the Kafka broker', brokerControl(kafka)) },
  services: Object.fromEntries(
    [...SERVICES, ...RELAYS, ...twins].map((name) => [
      name,
      announced(
        name,
        serviceControl(
          () => {
            const service = services[name];
            if (!service) throw new Error(`${name} was never started`);
            return service;
          },
          () => start(name),
        ),
      ),
    ]),
  ),
  writeMode: ordersWriteModeSwitch(`http://127.0.0.1:${ports.orders}`, ordersToken),
};

/**
 * Prometheus scraping the six processes and evaluating infra/prometheus/alerts.yml, if the
 * `prometheus` binary is on PATH (Debian: apt-get install prometheus). At demo speed: every 5 s
 * instead of production's 15 s (tools/devstack/src/prometheusConfig.ts).
 */
async function startPrometheus(): Promise<ChildProcess | undefined> {
  if (!prometheusWanted) return undefined;
  if (await isPortInUse(prometheusPort)) {
    say(
      'prometheus',
      `not started: 127.0.0.1:${prometheusPort} is taken (another Prometheus? PROMETHEUS_PORT=… picks another port)`,
    );
    return undefined;
  }
  const binary = (process.env.PATH ?? '')
    .split(delimiter)
    .map((dir) => join(dir, 'prometheus'))
    .find((path) => existsSync(path));
  if (!binary) {
    say(
      'prometheus',
      'not installed, so the console has no charts or alerts; to add them: sudo apt-get install -y prometheus',
    );
    return undefined;
  }
  mkdirSync('.local/logs', { recursive: true });
  mkdirSync('.local/prometheus', { recursive: true });
  const configFile = `.local/prometheus/demo-${prometheusPort}.yml`;
  writeFileSync(configFile, demoPrometheusConfig(ports));
  const log = createWriteStream('.local/logs/demo-prometheus.log', { flags: 'a' });
  const child = spawn(
    binary,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=.local/prometheus/data-${prometheusPort}`,
      `--web.listen-address=127.0.0.1:${prometheusPort}`,
      // The latency histograms' trace ids (exemplars), as in docker compose.
      '--enable-feature=exemplar-storage',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  child.once('exit', (code, signal) => {
    if (!stopping) say('prometheus', `exited (${signal ?? code}); see .local/logs/demo-prometheus.log`);
  });
  return child;
}

try {
  await startTogether(SERVICES, start); // first: they create the tables the relays read
  await startTogether(
    twins.filter((name) => !name.startsWith('relay-')),
    start,
  );
  if (Object.values(modes).includes('debezium')) {
    print(`Starting Kafka Connect on 127.0.0.1:${connectPort} for the debezium relays…`);
  }
  connect = await startCdcRelays({
    modes,
    databaseUrls,
    brokers: kafka.brokers,
    connectPort,
    topicPrefix: '',
    topicPartitions: 6, // as the topics created above
    log: (message) => say('devstack', message),
  });
  await startTogether(RELAYS, start);
  await startTogether(
    twins.filter((name) => name.startsWith('relay-')),
    start,
  );
  prometheus = await startPrometheus();
  const config = loadConfig('console', configSchema, {
    PORT: String(consolePort),
    ORDERS_URL: `http://127.0.0.1:${ports.orders}`,
    INVENTORY_URL: `http://127.0.0.1:${ports.inventory}`,
    BILLING_URL: `http://127.0.0.1:${ports.billing}`,
    RELAY_ORDERS_URL: `http://127.0.0.1:${ports['relay-orders']}`,
    RELAY_INVENTORY_URL: `http://127.0.0.1:${ports['relay-inventory']}`,
    RELAY_BILLING_URL: `http://127.0.0.1:${ports['relay-billing']}`,
    ORDERS_DATABASE_URL: databaseUrls.orders,
    INVENTORY_DATABASE_URL: databaseUrls.inventory,
    BILLING_DATABASE_URL: databaseUrls.billing,
    KAFKA_BROKERS: kafka.brokers.join(','),
    CONSOLE_ADMIN_TOKEN: consoleToken,
    RELAY_ADMIN_TOKEN: relayToken,
    ...(prometheus ? { PROMETHEUS_URL: `http://127.0.0.1:${prometheusPort}` } : {}),
    // Links to dashboards, when a Grafana runs somewhere, and to each order's trace in Zipkin.
    GRAFANA_URL: process.env.GRAFANA_URL,
    TRACE_URL_TEMPLATE: process.env.TRACE_URL_TEMPLATE ?? zipkin?.traceUrlTemplate,
    ...(zipkin ? { ZIPKIN_URL: zipkin.url } : {}),
  });
  consoleApp = await startConsole({ config, logger: createLogger('console', 'warn'), controls });
} catch (error) {
  await fail(error);
}

const postgresUrl = new URL(postgres);
const psqlTarget = `-h ${postgresUrl.hostname} ${postgresUrl.port && postgresUrl.port !== '5432' ? `-p ${postgresUrl.port} ` : ''}-U ${postgresUrl.username || 'postgres'}`;
print(`
${styleText('bold', 'The outbox demo is running.')}

  ${styleText(['bold', 'green'], `open ${consoleApp?.url}/#token=${consoleToken}`)}
  the web console: place orders, watch the saga, the outboxes and the consumers, break the broker
  (the #token part signs you in for the stop / kill -9 / start buttons of the broker, the services
  and the relays; admin token ${consoleToken})
${prometheus ? `\n  Prometheus       http://127.0.0.1:${prometheusPort} (alerts: /alerts; scrapes and evaluates every ${DEMO_PROMETHEUS_INTERVAL_SECONDS} s, production 15 s)` : ''}${zipkin ? `\n  Zipkin           ${zipkin.url}/zipkin/ (every order's trace; the console links each one)` : ''}${prometheus || zipkin ? '\n' : ''}${embeddedPostgres ? `\n  PostgreSQL       ${postgres} (embedded: no server answered there; data in ${embeddedPostgres.dataDir})\n` : ''}
  orders API       http://127.0.0.1:${ports.orders}/orders
  inventory        http://127.0.0.1:${ports.inventory}/healthz
  billing          http://127.0.0.1:${ports.billing}/healthz
  relays           http://127.0.0.1:${ports['relay-orders']}/healthz (orders outbox), :${ports['relay-inventory']} (inventory), :${ports['relay-billing']} (billing)
                   modes: orders ${modes.orders}, inventory ${modes.inventory}, billing ${modes.billing}${connect ? ` (Kafka Connect ${connect.url})` : ''}
  Kafka            ${kafka.brokers.join(',')}
  every process has /metrics next to /healthz

Or from a terminal: place an order
  curl -s -X POST http://127.0.0.1:${ports.orders}/orders -H 'content-type: application/json' \\
    -d '{"customerId":"alice","currency":"EUR","items":[{"sku":"KB-101","quantity":1}]}'

Then follow it: PENDING, then CONFIRMED once stock is reserved and payment authorized
  curl -s http://127.0.0.1:${ports.orders}/orders/<id>
  psql ${psqlTarget} -d inventory -c 'select * from reservations'
  psql ${psqlTarget} -d billing -c 'select * from payments'
A customer id starting with "declined" is declined by the simulated payment provider; ordering
more than the stock (e.g. 30 of MN-303) is rejected by inventory: both end CANCELLED.

${
  onCluster
    ? `Kill a broker (the console's buttons, or another terminal) and watch its partitions move, then come back:
  ./dev kafka kill --cluster --node 2     …place orders…     ./dev kafka start --cluster --node 2`
    : `Kill the broker (the console's buttons, or another terminal) and watch the relay degrade, then recover:
  ./dev kafka kill     …place orders…     ./dev kafka start`
}
A walkthrough: docs/walkthrough.md

Ctrl-C stops everything.
`);
