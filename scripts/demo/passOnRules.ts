// The demo's rules for passOn.ts: what each process accepts comes from its app's own config schema
// (the one that validates it at start-up), so a setting added to an app reaches the demo with no
// list to keep in step here.
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { configSchema as billing } from '@outbox/billing/config';
import { configSchema as consoleSchema } from '@outbox/console/config';
import type { RelayMode } from '@outbox/devstack/cdc-relays';
import { configSchema as inventory } from '@outbox/inventory/config';
import { configSchema as orders } from '@outbox/orders/config';
import { configSchema as relay } from '@outbox/relay/config';
import type { PassOnRules } from './passOn.ts';

/** Read by every app's tracing set-up (runtime's tracingSdk.ts) rather than by its config. */
const TRACING = [
  'TRACING_MAX_TRACES_PER_SECOND',
  'TRACING_TRUST_INCOMING_TRACEPARENT',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
];

/** The polling relay's wait; a debezium relay refuses it (its connector publishes). */
const STANDBY = ['DATABASE_WAIT_FOR_STANDBY', 'DATABASE_STANDBY_WAIT_MS'];

const OWN_DEMO_PROCESS = "the demo's processes";

/** The variables the demo sets per process, and why a value of the caller's cannot apply. */
const MANAGED: Record<string, string> = {
  DATABASE_URL: `${OWN_DEMO_PROCESS} use their service's database on DEMO_POSTGRES_URL`,
  KAFKA_BROKERS: `${OWN_DEMO_PROCESS} use the demo's own broker (KAFKA_PORT)`,
  KAFKA_TOPIC_PREFIX: 'the demo creates its topics, and the console reads them, without a prefix',
  KAFKA_REPLICATION_FACTOR: 'the demo sets it: 1 on one broker, 3 with --cluster',
  KAFKA_GROUP_ID: 'each service consumes in its own group, named after it',
  PORT: 'each process gets its port from DEMO_BASE_PORT (the console CONSOLE_PORT)',
  HOST: `${OWN_DEMO_PROCESS} listen on 127.0.0.1 only`,
  NODE_ENV: `${OWN_DEMO_PROCESS} run with the demo's switches allowed, which NODE_ENV=production refuses`,
  OUTBOX_ALLOW_FAULTS: 'the demo allows its switches itself (demo)',
  WRITE_MODES_SWITCHABLE: "the console's write-mode switch needs it on",
  ORDERS_ADMIN_TOKEN: "the console's buttons use a token the demo makes",
  RELAY_ADMIN_TOKEN: "the console's redrive uses a token the demo makes",
  RELAY_ID: 'each relay leases under its own name',
  RELAY_CONNECT_URL: "set with RELAY_MODE=debezium: the demo's Kafka Connect (CONNECT_PORT)",
  RELAY_CONNECTOR: 'set with RELAY_MODE=debezium, one connector per outbox',
  RELAY_REPLICATION_SLOT: 'set with RELAY_MODE=debezium, one slot per outbox',
  ORDERS_URL: "the console reads the demo's own processes",
  INVENTORY_URL: "the console reads the demo's own processes",
  BILLING_URL: "the console reads the demo's own processes",
  RELAY_ORDERS_URL: "the console reads the demo's own processes",
  RELAY_INVENTORY_URL: "the console reads the demo's own processes",
  RELAY_BILLING_URL: "the console reads the demo's own processes",
  ORDERS_DATABASE_URL: "the console reads the demo's databases",
  INVENTORY_DATABASE_URL: "the console reads the demo's databases",
  BILLING_DATABASE_URL: "the console reads the demo's databases",
  PROMETHEUS_URL: "the console reads the demo's Prometheus (PROMETHEUS_PORT)",
  ZIPKIN_URL: "the console reads the demo's Zipkin (ZIPKIN_PORT)",
};

/** Read by the demo itself (settings.ts): they shape the demo and are not passed on as they are. */
const OWN = [
  'DEMO_POSTGRES_URL',
  'DEMO_EMBEDDED_POSTGRES',
  'DEMO_BASE_PORT',
  'DEMO_KAFKA',
  'DEMO_PROMETHEUS',
  'DEMO_TRACING',
  'DEMO_FAILOVER',
  'DEMO_STANDBY_WAIT',
  'KAFKA_PORT',
  'CONSOLE_PORT',
  'PROMETHEUS_PORT',
  'ZIPKIN_PORT',
  'CONNECT_PORT',
  'RELAY_MODE',
  'RELAY_MODE_ORDERS',
  'RELAY_MODE_INVENTORY',
  'RELAY_MODE_BILLING',
  'KAFKA_CLIENT',
  'CONSOLE_ADMIN_TOKEN',
  'GRAFANA_URL',
  'TRACE_URL_TEMPLATE',
];

const SERVICE_PREFIXES = [
  'DATABASE_',
  'KAFKA_',
  'RELAY_',
  'PAYMENT_',
  'SAGA_',
  'ADMISSION_',
  'INBOX_',
  'IDEMPOTENCY_',
  'FAULT_',
  'CONSOLE_',
  'TRACING_',
  'ORDERS_',
  'INVENTORY_',
  'BILLING_',
  'OUTBOX_',
];

const keys = (schema: { shape: object }) => Object.keys(schema.shape);

export function demoPassOnRules(modes: Record<'orders' | 'inventory' | 'billing', RelayMode>): PassOnRules {
  const relayAccepts = (of: 'orders' | 'inventory' | 'billing') =>
    keys(relay).filter((variable) => modes[of] === 'polling' || !STANDBY.includes(variable));
  return {
    accepts: {
      orders: [...keys(orders), ...TRACING],
      inventory: [...keys(inventory), ...TRACING],
      billing: [...keys(billing), ...TRACING],
      'relay-orders': [...relayAccepts('orders'), ...TRACING],
      'relay-inventory': [...relayAccepts('inventory'), ...TRACING],
      'relay-billing': [...relayAccepts('billing'), ...TRACING],
      // The console runs inside the demo, its logger at warn.
      console: keys(consoleSchema).filter((variable) => variable !== 'LOG_LEVEL'),
    },
    managed: MANAGED,
    ownVariables: OWN,
    servicePrefixes: SERVICE_PREFIXES,
  };
}

/**
 * `./dev demo --env FILE`: the file's variables (KEY=value lines, as docker compose's `.env`),
 * under the environment's: a variable set in both keeps the environment's value, as in compose.
 */
export function environmentWithFile(
  env: Record<string, string | undefined>,
  argv: string[],
): Record<string, string | undefined> {
  const at = argv.indexOf('--env');
  if (at < 0) return env;
  const file = argv[at + 1];
  if (!file) throw new Error('--env needs a file: ./dev demo --env production.env');
  try {
    return { ...parseEnv(readFileSync(file, 'utf8')), ...env };
  } catch (error) {
    throw new Error(`--env ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
