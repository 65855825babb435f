// Kafka Connect killed (-9) and started again from the demo controls, in a real Chromium, with a
// real worker, connector and relay in debezium mode (docs/design.md#polling-or-cdc): the console
// shows the worker stopped and the relay degraded, the supervisor leaves a worker the console
// killed alone, and after Start the worker runs, the relay says ok again and the events written
// meanwhile are published.
import { randomBytes } from 'node:crypto';
import { registerOutboxConnector } from '@outbox/devstack/cdc-connector';
import { deleteConnector } from '@outbox/devstack/connect-rest';
import {
  dropPublication,
  dropReplicationSlot,
  logicalDecodingUnavailable,
} from '@outbox/devstack/logical-decoding';
import { freePort } from '@outbox/devstack/ports';
import { type ServiceProcess, startService } from '@outbox/devstack/service-process';
import { type Supervisor, superviseConnect } from '@outbox/devstack/supervisor';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { startTestConnectWorker, type TestConnectWorker } from '@outbox/devstack/testing/test-connect-worker';
import { queryOnce, type TestDatabase, testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { loadConfig } from '@outbox/runtime/config';
import { createLogger } from '@outbox/runtime/logger';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../src/config.ts';
import { type RunningConsole, startConsole } from '../src/console.ts';
import { connectControl } from '../src/processControls.ts';
import { type ConsolePage, openConsole, screenshot } from './browser.ts';
import { CONSOLE_TOKEN } from './consoleStack.ts';

const unavailable = await logicalDecodingUnavailable(testPostgresUrl);
if (unavailable) console.warn(`console Connect test skipped: ${unavailable}`);

useLeakGuard();

const brokers = sharedKafkaBrokers();
const run = randomBytes(3).toString('hex');
const prefix = `console-connect-${run}.`;
const names = { slot: `console_connect_${run}`, connector: `console-connect-${run}` };

let db: TestDatabase | undefined;
let connect: TestConnectWorker | undefined;
let relay: ServiceProcess | undefined;
let supervisor: Supervisor | undefined;
let consoleApp: RunningConsole | undefined;
let browser: ConsolePage | undefined;
const reports: string[] = [];

beforeAll(async () => {
  if (unavailable) return;
  [db, connect] = await Promise.all([
    createOutboxDatabase('console_connect'),
    startTestConnectWorker('console-connect', brokers),
  ]);
  await registerOutboxConnector(connect.worker.url, names.connector, {
    databaseUrl: db.url,
    topicPrefix: prefix,
    topicPartitions: 3,
    slotName: names.slot,
    publicationName: names.slot,
    serverName: names.connector,
  });
  relay = await startService(
    'relay',
    {
      DATABASE_URL: db.url,
      KAFKA_BROKERS: brokers.join(','),
      KAFKA_TOPIC_PREFIX: prefix,
      KAFKA_TOPIC_PARTITIONS: '3',
      RELAY_MODE: 'debezium',
      RELAY_CONNECT_URL: connect.worker.url,
      RELAY_CONNECTOR: names.connector,
      RELAY_REPLICATION_SLOT: names.slot,
    },
    { port: await freePort(), label: 'console-connect' },
  );
  supervisor = superviseConnect(connect.worker, { report: (message) => reports.push(message) });
  const nobody = `http://127.0.0.1:${await freePort()}`;
  const config = loadConfig('console', configSchema, {
    PORT: '0',
    ORDERS_URL: nobody,
    INVENTORY_URL: nobody,
    BILLING_URL: nobody,
    RELAY_ORDERS_URL: relay.url,
    RELAY_INVENTORY_URL: nobody,
    RELAY_BILLING_URL: nobody,
    ORDERS_DATABASE_URL: db.url,
    INVENTORY_DATABASE_URL: db.url,
    BILLING_DATABASE_URL: db.url,
    KAFKA_BROKERS: brokers.join(','),
    KAFKA_TOPIC_PREFIX: prefix,
    CONSOLE_ADMIN_TOKEN: CONSOLE_TOKEN,
  });
  consoleApp = await startConsole({
    config,
    logger: createLogger('console', 'silent'),
    controls: { brokers: {}, services: { connect: connectControl(connect.worker, supervisor) } },
  });
  browser = await openConsole(consoleApp.url, CONSOLE_TOKEN);
}, 240_000);

afterAll(async () => {
  supervisor?.stop();
  await browser?.browser.close();
  await consoleApp?.close();
  await relay?.stop();
  if (connect) await deleteConnector(connect.worker.url, names.connector).catch(() => false);
  await connect?.dispose();
  if (db) {
    await dropReplicationSlot(db.url, names.slot);
    await dropPublication(db.url, names.slot);
    await db.drop();
  }
  if (!unavailable) await deleteTopics([`${prefix}order.events`, `__debezium-heartbeat.${names.connector}`]);
}, 180_000);

describe.skipIf(unavailable !== undefined)('Kafka Connect in the demo controls', () => {
  it('is killed and started from the console, the relay degraded meanwhile and ok again after', {
    timeout: 300_000,
  }, async () => {
    if (!browser || !db || !connect) throw new Error('not set up');
    const { page } = browser;
    const state = page.locator('#demo tr[data-target="connect"] [data-field="state"]');
    const relayField = page.locator('[data-service="orders"] [data-field="relay"]');
    await state.filter({ hasText: 'running' }).waitFor({ timeout: 30_000 });
    await relayField.filter({ hasNotText: 'degraded' }).waitFor({ timeout: 60_000 });
    expect(await page.locator('#demo tr[data-target="connect"]').textContent()).toContain('Kafka Connect');

    await page.click('#demo tr[data-target="connect"] button[data-action="kill"]');
    await state.filter({ hasText: 'stopped' }).waitFor({ timeout: 60_000 });
    await relayField.filter({ hasText: 'degraded' }).waitFor({ timeout: 60_000 });
    await insertEvents(db.url, { count: 10, aggregates: 5, aggregateIdPrefix: `while-down-${run}-` });
    await screenshot(page, 'console-connect-killed');
    // Killed from the console: the supervisor left it down and said nothing.
    expect(connect.worker.isRunning()).toBe(false);
    expect(reports).toEqual([]);

    await page.click('#demo tr[data-target="connect"] button[data-action="start"]');
    await state.filter({ hasText: 'running' }).waitFor({ timeout: 180_000 });
    await relayField.filter({ hasNotText: 'degraded' }).waitFor({ timeout: 120_000 });
    // The rows written while it was down are published, and known to be.
    await eventually(
      'the rows written while Connect was down published',
      async () => {
        const left = await queryOnce<{ n: number }>(
          db?.url ?? '',
          `select count(*)::int as n from outbox where status <> 'published'`,
        );
        return left[0]?.n === 0 ? true : undefined;
      },
      120_000,
    );
    expect(browser.errors).toEqual([]);
  });
});

async function deleteTopics(topics: string[]): Promise<void> {
  const admin = new Kafka({
    clientId: 'console-connect-cleanup',
    brokers,
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const ours = topics.filter((topic) => existing.has(topic));
    if (ours.length > 0) await admin.deleteTopics({ topics: ours });
  } finally {
    await admin.disconnect();
  }
}
