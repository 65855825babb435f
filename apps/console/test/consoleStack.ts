import { randomBytes } from 'node:crypto';
import { RELAYS, SERVICES } from '@outbox/devstack/stack-plan';
import type { Stack } from '@outbox/devstack/testing/stack';
import { loadConfig } from '@outbox/runtime/config';
import { createLogger } from '@outbox/runtime/logger';
import { configSchema } from '../src/config.ts';
import { type RunningConsole, startConsole } from '../src/console.ts';
import type { DemoControls } from '../src/demoControlRoutes.ts';
import { serviceControl } from '../src/processControls.ts';

export const CONSOLE_TOKEN = `console-${randomBytes(12).toString('hex')}`;
export const RELAY_TOKEN = `relay-${randomBytes(12).toString('hex')}`;

/** startStack's extra environment: the relays' redrive endpoint on, with RELAY_TOKEN. */
export const relayAdminEnv = Object.fromEntries(
  RELAYS.map((name) => [name, { RELAY_ADMIN_TOKEN: RELAY_TOKEN }]),
);

/** The console on a free port, watching the given stack, configured through its real config schema. */
export function startConsoleFor(
  stack: Stack,
  kafkaBrokers: string[],
  options: { controls?: DemoControls; env?: Record<string, string> } = {},
): Promise<RunningConsole> {
  const { services, databases } = stack;
  const config = loadConfig('console', configSchema, {
    PORT: '0',
    ORDERS_URL: services.orders.url,
    INVENTORY_URL: services.inventory.url,
    BILLING_URL: services.billing.url,
    RELAY_ORDERS_URL: services['relay-orders'].url,
    RELAY_INVENTORY_URL: services['relay-inventory'].url,
    RELAY_BILLING_URL: services['relay-billing'].url,
    ORDERS_DATABASE_URL: databases.orders.url,
    INVENTORY_DATABASE_URL: databases.inventory.url,
    BILLING_DATABASE_URL: databases.billing.url,
    KAFKA_BROKERS: kafkaBrokers.join(','),
    KAFKA_TOPIC_PREFIX: stack.topicPrefix,
    CONSOLE_ADMIN_TOKEN: CONSOLE_TOKEN,
    RELAY_ADMIN_TOKEN: RELAY_TOKEN,
    ...options.env,
  });
  return startConsole({
    config,
    logger: createLogger('console', 'warn'),
    ...(options.controls ? { controls: options.controls } : {}),
  });
}

/** The demo controls over a test stack's processes: stop, kill -9 and start each service and relay. */
export function processControlsOf(stack: Stack): DemoControls['services'] {
  return Object.fromEntries(
    [...SERVICES, ...RELAYS].map((name) => [
      name,
      serviceControl(
        () => stack.services[name],
        () => stack.restart(name),
      ),
    ]),
  );
}
