// The local demo without Docker: `./dev demo` (or `npm run demo` once set up).
// Starts the project's own Kafka broker, then the four apps against the local PostgreSQL (each
// service creates and migrates its own database), prints their logs and URLs, and stops
// everything on Ctrl-C.
import { styleText } from 'node:util';
import { KafkaBroker } from '@outbox/devstack/kafka-broker';
import { type ServiceProcess, startService } from '@outbox/devstack/service-process';
import { planStack, RELAYS, SERVICES, type ServiceName } from '@outbox/devstack/stack-plan';
import { hideKafkajsTimeoutWarning } from '@outbox/events';

const postgres = process.env.DEMO_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432';
const kafkaPort = Number(process.env.KAFKA_PORT ?? 9092);
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
} as const;

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
  console.log(`${styleText(colors[name as ServiceName] ?? 'white', name.padEnd(15))} │ ${text}`);
}

hideKafkajsTimeoutWarning(); // the broker's readiness probe uses kafkajs
const broker = new KafkaBroker({ name: 'demo', port: kafkaPort, controllerPort: kafkaPort + 1 });
const startedBroker = !broker.isRunning();
if (startedBroker) {
  console.log(`Starting Kafka on 127.0.0.1:${kafkaPort} (first run resolves the jars with Maven)…`);
  await broker.start();
}
const readyMs = await broker.waitUntilReady(120_000);
console.log(`Kafka is ready at ${broker.brokers.join(',')} (${(readyMs / 1000).toFixed(1)} s)`);

const plans = planStack({
  databaseUrls: {
    orders: `${postgres}/orders`,
    inventory: `${postgres}/inventory`,
    billing: `${postgres}/billing`,
  },
  kafkaBrokers: broker.brokers,
});
const services: ServiceProcess[] = [];
const start = async (name: ServiceName) => {
  const plan = plans[name];
  services.push(
    await startService(plan.app, plan.env, { port: ports[name], label: 'demo', name, onLine: printLine }),
  );
};

let stopping = false;
async function stopAll(exitCode: number): Promise<never> {
  if (stopping) process.exit(1);
  stopping = true;
  console.log('\nStopping the services…');
  await Promise.allSettled(services.map((service) => service.stop()));
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
} catch (err) {
  console.error(styleText('red', String(err)));
  await stopAll(1);
}

console.log(`
${styleText('bold', 'The outbox demo is running.')}
  orders API       http://127.0.0.1:${ports.orders}/orders
  inventory        http://127.0.0.1:${ports.inventory}/healthz
  billing          http://127.0.0.1:${ports.billing}/healthz
  relays           http://127.0.0.1:${ports['relay-orders']}/healthz (orders outbox), :${ports['relay-inventory']} (inventory), :${ports['relay-billing']} (billing)
  Kafka            ${broker.brokers.join(',')}
  every process has /metrics next to /healthz

Place an order:
  curl -s -X POST http://127.0.0.1:${ports.orders}/orders -H 'content-type: application/json' \\
    -d '{"customerId":"alice","currency":"EUR","items":[{"sku":"KB-101","quantity":1}]}'

Then follow it: PENDING, then CONFIRMED once stock is reserved and payment authorized
  curl -s http://127.0.0.1:${ports.orders}/orders/<id>
  psql -h 127.0.0.1 -U postgres -d inventory -c 'select * from reservations'
  psql -h 127.0.0.1 -U postgres -d billing -c 'select * from payments'
A customer id starting with "declined" is declined by the simulated payment provider; ordering
more than the stock (e.g. 30 of MN-303) is rejected by inventory: both end CANCELLED.

Kill the broker (in another terminal) and watch the relay degrade, then recover:
  ./dev kafka kill     …place orders…     ./dev kafka start

Ctrl-C stops everything.
`);
