// The web console inside the demo's process, with the stop / kill -9 / start buttons that only the
// demo can offer, because only it owns the processes.
import { configSchema } from '@outbox/console/config';
import { type RunningConsole, startConsole } from '@outbox/console/console';
import type { DatabaseFailover, DemoControls, ProcessControl } from '@outbox/console/demo-controls';
import {
  brokerControl,
  connectControl,
  ordersWriteModeSwitch,
  serviceControl,
} from '@outbox/console/process-controls';
import type { KafkaBroker } from '@outbox/devstack/kafka-broker';
import { KafkaCluster } from '@outbox/devstack/kafka-cluster';
import { RELAYS, SERVICES } from '@outbox/devstack/stack-plan';
import type { ZipkinServer } from '@outbox/devstack/zipkin-server';
import { loadConfig } from '@outbox/runtime/config';
import { createLogger } from '@outbox/runtime/logger';
import type { DatabaseUrls, StartApp } from './apps.ts';
import { running } from './lifecycle.ts';
import { say } from './output.ts';
import type { DemoSettings } from './settings.ts';

type ConsoleWiring = {
  settings: DemoSettings;
  databaseUrls: DatabaseUrls;
  kafka: KafkaBroker | KafkaCluster;
  zipkin: ZipkinServer | undefined;
  prometheusUrl: string | undefined;
  start: StartApp;
  /** `--failover`: the buttons of each database's primary and standby (failoverControl.ts). */
  databases?: DatabaseFailover;
};

export async function startDemoConsole(wiring: ConsoleWiring): Promise<RunningConsole> {
  const { settings, databaseUrls, kafka, zipkin, prometheusUrl } = wiring;
  const { ports } = settings;
  const config = loadConfig('console', configSchema, {
    ...settings.passedOn.env.console, // CONSOLE_HOSTS, CONSOLE_READ_TOKEN, Kafka's TLS…
    PORT: String(settings.consolePort),
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
    CONSOLE_ADMIN_TOKEN: settings.consoleToken,
    RELAY_ADMIN_TOKEN: settings.relayToken,
    ...(prometheusUrl ? { PROMETHEUS_URL: prometheusUrl } : {}),
    // Links to dashboards, when a Grafana runs somewhere, and to each order's trace in Zipkin.
    GRAFANA_URL: settings.grafanaUrl,
    TRACE_URL_TEMPLATE: settings.traceUrlTemplate ?? zipkin?.traceUrlTemplate,
    ...(zipkin ? { ZIPKIN_URL: zipkin.url } : {}),
  });
  const controls = demoControls(wiring);
  return startConsole({ config, logger: createLogger('console', 'warn'), controls });
}

/** Kafka Connect's row, when debezium relays run: `connect`, its supervisor told of each action. */
function connectControls(): Record<string, ProcessControl> {
  if (!running.connect) return {};
  return { connect: announced('Kafka Connect', connectControl(running.connect, running.connectSupervisor)) };
}

function demoControls({ settings, kafka, start, databases }: ConsoleWiring): DemoControls {
  return {
    brokers:
      kafka instanceof KafkaCluster
        ? Object.fromEntries(
            kafka.nodes.map((node) => {
              const id = node.cluster?.nodeId;
              return [`broker-${id}`, announced(`Kafka broker ${id}`, brokerControl(node))];
            }),
          )
        : { broker: announced('the Kafka broker', brokerControl(kafka)) },
    services: {
      ...Object.fromEntries(
        [...SERVICES, ...RELAYS, ...settings.twins].map((name) => [
          name,
          announced(
            name,
            serviceControl(
              () => {
                const service = running.services[name];
                if (!service) throw new Error(`${name} was never started`);
                return service;
              },
              () => start(name),
            ),
          ),
        ]),
      ),
      // Kafka Connect, with the debezium relays: `connect` (apps/console's demo controls).
      ...connectControls(),
    },
    writeMode: ordersWriteModeSwitch(`http://127.0.0.1:${settings.ports.orders}`, settings.ordersToken),
    ...(databases ? { databases } : {}),
  };
}

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
