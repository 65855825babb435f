// The local demo without Docker: `./dev demo` (or `npm run demo` once set up).
// Starts the project's own Kafka broker, then the four apps against the local PostgreSQL (each
// service creates and migrates its own database), the web console (with the demo's stop / kill -9
// / start controls, which only this script can offer because only it owns the processes), and
// Prometheus when it is installed. Prints the logs and the URLs, and stops everything on Ctrl-C.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { styleText } from 'node:util';
import { configSchema } from '@outbox/console/config';
import { type RunningConsole, startConsole } from '@outbox/console/console';
import type { DemoControls, ProcessControl } from '@outbox/console/demo-controls';
import { brokerControl, serviceControl } from '@outbox/console/process-controls';
import { KafkaBroker } from '@outbox/devstack/kafka-broker';
import { type ServiceProcess, startService } from '@outbox/devstack/service-process';
import { planStack, RELAYS, SERVICES, type ServiceName } from '@outbox/devstack/stack-plan';
import { fixKafkajsIdleTimerLoop } from '@outbox/events';
import { loadConfig } from '@outbox/service/config';
import { createLogger } from '@outbox/service/logger';

const postgres = process.env.DEMO_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432';
const kafkaPort = Number(process.env.KAFKA_PORT ?? 9092);
const consolePort = Number(process.env.CONSOLE_PORT ?? 8080);
const prometheusPort = 9090;
const ports: Record<ServiceName, number> = {
  orders: 3001,
  'relay-orders': 3002,
  inventory: 3003,
  billing: 3004,
  'relay-inventory': 3005,
  'relay-billing': 3006,
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
} as const;
// Every admin action of the console needs this token; the relays' redrive endpoint needs the other.
const consoleToken = process.env.CONSOLE_ADMIN_TOKEN ?? randomBytes(16).toString('hex');
const relayToken = randomBytes(16).toString('hex');

/** One readable line per JSON log line: time, service, level, message, then the details. */
function printLine(name: string, line: string): void {
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
  const color = colors[name as keyof typeof colors] ?? 'white';
  console.log(`${styleText(color, name.padEnd(15))} │ ${text}`);
}

/** A line of the demo's own, in the same shape as the services' log lines. */
function say(name: string, msg: string): void {
  printLine(name, JSON.stringify({ time: Date.now(), level: 30, msg }));
}

fixKafkajsIdleTimerLoop(); // the broker's readiness probe uses kafkajs
const broker = new KafkaBroker({ name: 'demo', port: kafkaPort, controllerPort: kafkaPort + 1 });
const startedBroker = !broker.isRunning();
if (startedBroker) {
  console.log(`Starting Kafka on 127.0.0.1:${kafkaPort} (first run resolves the jars with Maven)…`);
  await broker.start();
}
const readyMs = await broker.waitUntilReady(120_000);
console.log(`Kafka is ready at ${broker.brokers.join(',')} (${(readyMs / 1000).toFixed(1)} s)`);

const databaseUrls = {
  orders: `${postgres}/orders`,
  inventory: `${postgres}/inventory`,
  billing: `${postgres}/billing`,
};
const plans = planStack({
  databaseUrls,
  kafkaBrokers: broker.brokers,
  extraEnv: Object.fromEntries(RELAYS.map((name) => [name, { RELAY_ADMIN_TOKEN: relayToken }])),
});
const services: Partial<Record<ServiceName, ServiceProcess>> = {};
let stopping = false;
const start = async (name: ServiceName) => {
  const plan = plans[name];
  services[name] = await startService(plan.app, plan.env, {
    port: ports[name],
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
  broker: announced('the Kafka broker', brokerControl(broker)),
  relays: Object.fromEntries(
    RELAYS.map((name) => [
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
};

/** Prometheus scraping the six processes, if the `prometheus` binary is on PATH (Debian: apt-get install prometheus). */
function startPrometheus(): ChildProcess | undefined {
  const binary = (process.env.PATH ?? '')
    .split(delimiter)
    .map((dir) => join(dir, 'prometheus'))
    .find((path) => existsSync(path));
  if (!binary) return undefined;
  mkdirSync('.local/logs', { recursive: true });
  const log = createWriteStream('.local/logs/demo-prometheus.log', { flags: 'a' });
  const child = spawn(
    binary,
    [
      '--config.file=infra/prometheus/prometheus.local.yml',
      '--storage.tsdb.path=.local/prometheus',
      `--web.listen-address=127.0.0.1:${prometheusPort}`,
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

let consoleApp: RunningConsole | undefined;
let prometheus: ChildProcess | undefined;
async function stopAll(exitCode: number): Promise<never> {
  if (stopping) process.exit(1);
  stopping = true;
  console.log('\nStopping the console and the services…');
  await consoleApp?.close();
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus?.once('exit', resolve));
    prometheus.kill('SIGTERM');
    await exited;
  }
  await Promise.allSettled(Object.values(services).map((service) => service.stop()));
  if (startedBroker) {
    console.log('Stopping Kafka…');
    await broker.stop();
  }
  process.exit(exitCode);
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

try {
  await Promise.all(SERVICES.map(start)); // first: they create the tables the relays read
  await Promise.all(RELAYS.map(start));
  prometheus = startPrometheus();
  const config = loadConfig('console', configSchema, {
    PORT: String(consolePort),
    ORDERS_DATABASE_URL: databaseUrls.orders,
    INVENTORY_DATABASE_URL: databaseUrls.inventory,
    BILLING_DATABASE_URL: databaseUrls.billing,
    KAFKA_BROKERS: broker.brokers.join(','),
    CONSOLE_ADMIN_TOKEN: consoleToken,
    RELAY_ADMIN_TOKEN: relayToken,
    ...(prometheus ? { PROMETHEUS_URL: `http://127.0.0.1:${prometheusPort}` } : {}),
    // Links to dashboards and traces, when a Grafana or Jaeger is running somewhere.
    GRAFANA_URL: process.env.GRAFANA_URL,
    TRACE_URL_TEMPLATE: process.env.TRACE_URL_TEMPLATE,
  });
  consoleApp = await startConsole({ config, logger: createLogger('console', 'warn'), controls });
} catch (err) {
  console.error(styleText('red', String(err)));
  await stopAll(1);
}

console.log(`
${styleText('bold', 'The outbox demo is running.')}

  ${styleText(['bold', 'green'], `open ${consoleApp?.url}/#token=${consoleToken}`)}
  the web console: place orders, watch the saga, the outboxes and the consumers, break the broker
  (the #token part signs you in for the stop / kill -9 / start buttons; admin token ${consoleToken})
${prometheus ? `\n  Prometheus       http://127.0.0.1:${prometheusPort} (alerts: /alerts)\n` : ''}
  orders API       http://127.0.0.1:${ports.orders}/orders
  inventory        http://127.0.0.1:${ports.inventory}/healthz
  billing          http://127.0.0.1:${ports.billing}/healthz
  relays           http://127.0.0.1:${ports['relay-orders']}/healthz (orders outbox), :${ports['relay-inventory']} (inventory), :${ports['relay-billing']} (billing)
  Kafka            ${broker.brokers.join(',')}
  every process has /metrics next to /healthz

Or from a terminal: place an order
  curl -s -X POST http://127.0.0.1:${ports.orders}/orders -H 'content-type: application/json' \\
    -d '{"customerId":"alice","currency":"EUR","items":[{"sku":"KB-101","quantity":1}]}'

Then follow it: PENDING, then CONFIRMED once stock is reserved and payment authorized
  curl -s http://127.0.0.1:${ports.orders}/orders/<id>
  psql -h 127.0.0.1 -U postgres -d inventory -c 'select * from reservations'
  psql -h 127.0.0.1 -U postgres -d billing -c 'select * from payments'
A customer id starting with "declined" is declined by the simulated payment provider; ordering
more than the stock (e.g. 30 of MN-303) is rejected by inventory: both end CANCELLED.

Kill the broker (the console's buttons, or another terminal) and watch the relay degrade, then recover:
  ./dev kafka kill     …place orders…     ./dev kafka start
A walkthrough: docs/walkthrough.md

Ctrl-C stops everything.
`);
