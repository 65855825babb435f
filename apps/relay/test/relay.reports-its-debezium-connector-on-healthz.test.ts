import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceProcess } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce, testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../src/config.ts';
import { metricValue, startRelay, topicPrefix } from './relayProcess.ts';

/**
 * RELAY_MODE=debezium (docs/design.md#polling-or-cdc): a Debezium connector publishes the outbox,
 * and the relay process reports it on /healthz, from Kafka Connect's REST API, with its replication
 * slot, from PostgreSQL. Connect is a stand-in here that answers what a real worker answers
 * (tools/devstack/test and tests/cdc run a real one); the states are the ones a test can set. The
 * slot is a real one that nobody reads (tests/cdc has one a connector streams from).
 */

useLeakGuard();

const CONNECT_AUTHORIZATION = `Basic ${Buffer.from('relay:connect-secret').toString('base64')}`;

type Answer = { status: number; body?: unknown };
let answer: Answer = { status: 404 };
let connect: Server;
let connectUrl: string;
let relay: ServiceProcess | undefined;
const slot = `relay_healthz_${randomBytes(3).toString('hex')}`;

beforeAll(async () => {
  connect = createServer((req, res) => {
    // Behind BasicAuthSecurityRestExtension, as docs/production.md asks of a production worker.
    if (req.headers.authorization !== CONNECT_AUTHORIZATION) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="connect"' }).end();
      return;
    }
    if (req.url !== '/connectors/outbox-orders/status') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body ?? { error_code: answer.status, message: 'not found' }));
  });
  await new Promise<void>((resolve) => connect.listen(0, '127.0.0.1', resolve));
  connectUrl = `http://127.0.0.1:${(connect.address() as AddressInfo).port}`;
  relay = await startRelay('relay-debezium-mode', {
    // Not read in this mode, but the relay's config wants one, as in polling mode.
    DATABASE_URL: testPostgresUrl,
    KAFKA_BROKERS: sharedKafkaBrokers(),
    KAFKA_TOPIC_PREFIX: topicPrefix('relay-debezium'),
    RELAY_MODE: 'debezium',
    RELAY_CONNECT_URL: connectUrl,
    RELAY_CONNECT_USER: 'relay',
    RELAY_CONNECT_PASSWORD: 'connect-secret',
    RELAY_CONNECTOR: 'outbox-orders',
    RELAY_REPLICATION_SLOT: slot,
  });
});

afterAll(async () => {
  await relay?.stop();
  await new Promise((resolve) => connect?.close(resolve));
  await queryOnce(
    testPostgresUrl,
    'select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1',
    [slot],
  );
});

async function health(): Promise<Record<string, unknown>> {
  if (!relay) throw new Error('no relay');
  return (await (await fetch(`${relay.url}/healthz`)).json()) as Record<string, unknown>;
}

const running = {
  name: 'outbox-orders',
  connector: { state: 'RUNNING', worker_id: '127.0.0.1:8083' },
  tasks: [{ id: 0, state: 'RUNNING', worker_id: '127.0.0.1:8083' }],
  type: 'source',
};

describe('the relay in debezium mode', () => {
  it('is degraded, and says why, while its connector is not registered', async () => {
    answer = { status: 404 };
    expect(await health()).toMatchObject({
      status: 'degraded',
      mode: 'debezium',
      connector: 'outbox-orders',
      lastError: expect.stringContaining('not registered'),
    });
  });

  it('is degraded, and says why, while its replication slot does not exist', async () => {
    answer = { status: 200, body: running };
    expect(await health()).toMatchObject({
      status: 'degraded',
      connectorRunning: true,
      connectorState: 'RUNNING',
      taskStates: ['RUNNING'],
      slotError: `replication slot ${slot} does not exist: the connector creates it when it starts`,
    });
  });

  it('reports the WAL its slot holds, and is degraded while nobody reads the slot', async () => {
    answer = { status: 200, body: running };
    await queryOnce(testPostgresUrl, `select pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]);
    await queryOnce(testPostgresUrl, 'select pg_switch_wal()');
    const body = await health();
    expect(body).toMatchObject({
      status: 'degraded',
      connectorRunning: true,
      slot: { name: slot, active: false, walStatus: 'reserved' },
    });
    expect((body.slot as { retainedWalBytes: number }).retainedWalBytes).toBeGreaterThan(0);
    if (!relay) throw new Error('no relay');
    expect(await metricValue(relay, 'outbox_cdc_connector_running')).toBe(1);
    expect(await metricValue(relay, 'outbox_replication_slot_active')).toBe(0);
    expect(await metricValue(relay, 'outbox_replication_slot_retained_wal_bytes')).toBeGreaterThan(0);
    // A debezium relay has no backlog gauge: its rows stay pending until retention deletes them.
    expect(await (await fetch(`${relay.url}/metrics`)).text()).not.toMatch(/^outbox_events/m);
  });

  it('is degraded with the first line of the trace when the task failed', async () => {
    answer = {
      status: 200,
      body: {
        ...running,
        tasks: [
          {
            id: 0,
            state: 'FAILED',
            trace: 'org.apache.kafka.connect.errors.ConnectException: boom\n\tat ...',
          },
        ],
      },
    };
    expect(await health()).toMatchObject({
      status: 'degraded',
      connectorRunning: false,
      taskStates: ['FAILED'],
      lastError: 'org.apache.kafka.connect.errors.ConnectException: boom',
    });
  });

  it('is degraded when Kafka Connect does not answer', async () => {
    await new Promise((resolve) => connect.close(resolve));
    const body = await eventually('a degraded health', async () => {
      const current = await health();
      return current.status === 'degraded' ? current : undefined;
    });
    expect(body.lastError).toEqual(expect.stringContaining(`Kafka Connect not reachable at ${connectUrl}`));
  });
});

describe('RELAY_MODE', () => {
  const base = { DATABASE_URL: testPostgresUrl, KAFKA_BROKERS: '127.0.0.1:9092' };

  it('is polling unless set', () => {
    expect(configSchema.parse(base).RELAY_MODE).toBe('polling');
  });

  it('refuses a Connect URL with credentials, which /healthz and the logs would show', () => {
    const result = configSchema.safeParse({
      ...base,
      RELAY_MODE: 'debezium',
      RELAY_CONNECT_URL: 'http://relay:connect-secret@127.0.0.1:8083',
      RELAY_CONNECTOR: 'outbox-orders',
      RELAY_REPLICATION_SLOT: 'outbox_orders',
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
      ['RELAY_CONNECT_URL', expect.stringContaining('RELAY_CONNECT_USER and RELAY_CONNECT_PASSWORD')],
    ]);
  });

  it('takes the Connect user and password together or not at all', () => {
    const result = configSchema.safeParse({
      ...base,
      RELAY_MODE: 'debezium',
      RELAY_CONNECT_URL: 'http://127.0.0.1:8083',
      RELAY_CONNECT_USER: 'relay',
      RELAY_CONNECTOR: 'outbox-orders',
      RELAY_REPLICATION_SLOT: 'outbox_orders',
    });
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['RELAY_CONNECT_PASSWORD']);
  });

  it('debezium needs the Connect URL and the connector name', () => {
    const result = configSchema.safeParse({ ...base, RELAY_MODE: 'debezium' });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join('.')).sort()).toEqual([
      'RELAY_CONNECTOR',
      'RELAY_CONNECT_URL',
      'RELAY_REPLICATION_SLOT',
    ]);
  });
});
