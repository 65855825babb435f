// The four apps, planned as in production (tools/devstack/src/stackPlan.ts) with the demo's extras,
// and started in order: the services first (they create the tables the relays read), then the
// debezium relays' connectors if any, then the polling relays.
import { startCdcRelays } from '@outbox/devstack/cdc-relays';
import { type ServiceProcess, startService, startTogether } from '@outbox/devstack/service-process';
import { type ProcessName, planStack, RELAYS, SERVICES } from '@outbox/devstack/stack-plan';
import { superviseConnect } from '@outbox/devstack/supervisor';
import type { ZipkinServer } from '@outbox/devstack/zipkin-server';
import { running } from './lifecycle.ts';
import { print, printLine, say } from './output.ts';
import type { DemoProcess, DemoSettings } from './settings.ts';

export type DatabaseUrls = { orders: string; inventory: string; billing: string };
export type StartApp = (name: DemoProcess) => Promise<ServiceProcess>;

export function databaseUrlsOn(postgres: string): DatabaseUrls {
  return { orders: `${postgres}/orders`, inventory: `${postgres}/inventory`, billing: `${postgres}/billing` };
}

/** How to start (and, from the console, start again) each of the demo's processes. */
export function appStarter(
  settings: DemoSettings,
  databaseUrls: DatabaseUrls,
  brokers: string[],
  zipkin: ZipkinServer | undefined,
): StartApp {
  const plans = planStack({
    databaseUrls,
    kafkaBrokers: brokers,
    ...(settings.onCluster ? { kafkaReplicationFactor: 3 } : {}),
    // The console's write-mode switch and the chaos buttons need the demo switches, which every
    // app refuses unless told otherwise.
    allowFaults: 'demo',
    relayModes: settings.modes,
    connectUrl: `http://127.0.0.1:${settings.connectPort}`,
    extraEnv: Object.fromEntries(
      [...SERVICES, ...RELAYS].map((name) => [name, demoEnv(name, settings, zipkin)]),
    ),
  });
  return async (name) => {
    const own = name.replace(/-2$/, '') as ProcessName;
    const plan = plans[own];
    // A twin relay leases under its own id: two relays under one id would fence each other off nothing.
    const env = name !== own && own.startsWith('relay-') ? { ...plan.env, RELAY_ID: name } : plan.env;
    const service = await startService(plan.app, env, {
      port: settings.ports[name] ?? 0,
      label: 'demo',
      name,
      onLine: printLine,
    });
    running.services[name] = service;
    return service;
  };
}

function demoEnv(name: ProcessName, settings: DemoSettings, zipkin: ZipkinServer | undefined) {
  return {
    // With --failover's asynchronous standbys, the wait (a caller's own setting replaces it).
    ...(settings.failover?.standbyWait ? { DATABASE_WAIT_FOR_STANDBY: 'any' } : {}),
    // Then the caller's settings: what follows is the demo's own, which passOn.ts never passes.
    ...settings.passedOn.env[name],
    // Loopback only: the demo's API, ops endpoints and the relays' admin endpoint are for this machine.
    HOST: '127.0.0.1',
    ...(RELAYS.includes(name) ? { RELAY_ADMIN_TOKEN: settings.relayToken } : {}),
    // The console may switch orders to a naive dual write and back (docs/walkthrough.md, step 7).
    ...(name === 'orders'
      ? { WRITE_MODES_SWITCHABLE: 'true', ORDERS_ADMIN_TOKEN: settings.ordersToken }
      : {}),
    // Tracing on, in the demo only (tests and benchmarks run without it): every span to Zipkin.
    ...zipkin?.tracingEnv(name),
    ...(settings.kafkaClient ? { KAFKA_CLIENT: settings.kafkaClient } : {}),
  };
}

/** Services, their twins, the CDC connectors, then the relays and theirs. */
export async function startApps(
  settings: DemoSettings,
  databaseUrls: DatabaseUrls,
  brokers: string[],
  start: StartApp,
): Promise<void> {
  const { twins, modes, connectPort } = settings;
  await startTogether(SERVICES, start); // first: they create the tables the relays read
  await startTogether(
    twins.filter((name) => !name.startsWith('relay-')),
    start,
  );
  if (Object.values(modes).includes('debezium')) {
    print(`Starting Kafka Connect on 127.0.0.1:${connectPort} for the debezium relays…`);
  }
  running.connect = await startCdcRelays({
    modes,
    databaseUrls,
    brokers,
    connectPort,
    topicPrefix: '',
    topicPartitions: 6, // as the topics the demo creates (backingServices.ts)
    log: (message) => say('devstack', message),
  });
  // Restarted when it dies on its own, like Zipkin; the console's stop and kill -9 leave it down.
  if (running.connect) {
    running.connectSupervisor = superviseConnect(running.connect, {
      report: (message) => say('connect', message),
    });
  }
  await startTogether(RELAYS, start);
  await startTogether(
    twins.filter((name) => name.startsWith('relay-')),
    start,
  );
}
