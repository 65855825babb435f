// CDC mode (`needs.cdc`): every outbox published by a Debezium connector on a Kafka Connect
// worker of the scenario's own, the relays in debezium mode. The worker killed, the broker or
// PostgreSQL under it broken, a connector's task failed, the connectors registered under load.
import { setTimeout as sleep } from 'node:timers/promises';
import { connectorStatus, restartFailedTasks } from '@outbox/devstack/connect-rest';
import type { Admin } from 'kafkajs';
import type { Scenario, ScenarioContext } from '../scenario.ts';
import { databaseUrlsOf } from '../stack.ts';
import { systemTopics, withAdmin } from '../topics.ts';
import { brokerKill9 } from './broker.ts';
import { postgresRestart } from './postgres.ts';
import { awaitConnectorsRunning } from './support.ts';

/** kill -9 of the Kafka Connect worker 4 s into the load, started again 5 s later. */
async function killConnectAndRestart(context: ScenarioContext): Promise<void> {
  const { worker } = context.connect;
  await context.sleep(4_000);
  context.fault('kill -9 the Kafka Connect worker');
  await worker.kill();
  await context.sleep(5_000);
  context.fault('start the Kafka Connect worker again (same group, same internal topics)');
  await worker.start();
  await worker.waitUntilReady(120_000);
  await awaitConnectorsRunning(context);
}
export const cdcConnectKill9: Scenario = {
  name: 'cdc-connect-kill-9',
  breaks:
    'CDC mode: kill -9 of the Kafka Connect worker running the three Debezium connectors mid-stream, restarted 5 s later',
  expectation:
    'The API keeps accepting orders (their rows wait in the WAL, held by the replication slots); the restarted ' +
    'worker resumes each connector from its last committed source offset, re-sending what it had sent since: ' +
    'duplicates on the topics, nothing lost, each applied once.',
  needs: { cdc: true },
  inject: killConnectAndRestart,
};

export const cdcConnectKill9ExactlyOnce: Scenario = {
  name: 'cdc-connect-kill-9-exactly-once',
  breaks:
    'CDC mode with Kafka Connect exactly-once source support: kill -9 of the worker mid-stream, restarted 5 s later',
  expectation:
    "Each poll's records and its source offset commit in one Kafka transaction: the killed worker's open " +
    'transaction is aborted and read_committed consumers never see it; the restarted worker resumes after the ' +
    'last committed transaction. No duplicate on the topics, nothing lost.',
  needs: { cdc: true, exactlyOnceSource: true },
  inject: killConnectAndRestart,
};

export const cdcBrokerKill9: Scenario = {
  name: 'cdc-broker-kill-9',
  breaks:
    'CDC mode: kill -9 of the Kafka broker mid-stream (the Connect worker keeps its state there too), restarted 5 s later',
  expectation:
    'The API keeps accepting orders; the connectors cannot send nor commit offsets while the broker is away and ' +
    'retry; after the restart they go on from the WAL without an operator, and every event is applied once.',
  needs: { ownBroker: true, cdc: true },
  // The polling scenario's fault, then the connectors back to RUNNING.
  inject: async (context) => {
    await brokerKill9.inject(context);
    await awaitConnectorsRunning(context);
  },
};

export const cdcPostgresRestart: Scenario = {
  name: 'cdc-postgres-restart',
  breaks:
    'CDC mode: PostgreSQL (a private server, wal_level=logical) restarted twice with `pg_ctl restart -m immediate`; ' +
    'the connectors lose their replication connections',
  expectation:
    'The replication slots survive the crash (they are on disk, at their last confirmed position); the connectors ' +
    'reconnect and stream again from there; the API answers 503 meanwhile and the client retries with the same key.',
  needs: { privatePostgres: true, cdc: true },
  // The polling scenario's fault, then the connectors back to RUNNING.
  inject: async (context) => {
    await postgresRestart.inject(context);
    await awaitConnectorsRunning(context);
  },
};

/** The three connectors registered 3 s into the load, while orders are written. */
async function registerUnderLoad(context: ScenarioContext): Promise<void> {
  const connect = context.connect;
  await context.sleep(3_000);
  context.fault('register the three Debezium connectors while orders are written');
  await connect.register(databaseUrlsOf(context.stack), context.stack.topicPrefix);
  await awaitConnectorsRunning(context);
}

export const cdcConnectorRegisteredUnderLoad: Scenario = {
  name: 'cdc-connector-registered-under-load',
  breaks:
    'CDC mode: the relays run in debezium mode from the start, and the connectors are registered while ' +
    'orders are written; each slot is created while transactions are open',
  expectation:
    'A slot decodes only what commits after its consistent point, reached once every transaction open at its ' +
    'creation has ended. Each relay waits for that point, then publishes every row written up to it; the ' +
    'connector streams the rest. Every outbox row on its topic, each applied once.',
  needs: { cdc: true, cdcRegisteredByTheScenario: true },
  inject: registerUnderLoad,
};

/**
 * How the task is made to fail: the orders topic is set to refuse every record
 * (`max.message.bytes` = 64), as it refuses an event larger than the topic allows. Connect's
 * producer gets RecordTooLargeException, which no retry can fix, and with `errors.tolerance=none`
 * (the default) the task goes FAILED and stays so: Connect does not restart a failed task by
 * itself. The operator's fix: undo the cause, then restart the failed task through the REST API.
 */
const REFUSING_LIMIT = '64';

// kafkajs' enums (types only in its .d.ts; the CommonJS module's named exports are not all visible to ESM).
const TOPIC_RESOURCE = 2; // ConfigResourceTypes.TOPIC
const TOPIC_CONFIG = 1; // ConfigSource.TOPIC_CONFIG: set on the topic itself

export const cdcConnectorTaskFailed: Scenario = {
  name: 'cdc-connector-task-failed',
  breaks:
    "CDC mode: the orders connector's task FAILED (its topic refuses every record: max.message.bytes=64), " +
    'then, after the operator fixed the topic, restarted through the REST API',
  expectation:
    'A failed task stops the whole orders outbox, not one aggregate: no ORDER_CREATED is published, the API ' +
    'keeps accepting orders and their rows wait in the WAL. After `POST /connectors/outbox-orders/restart?' +
    'includeTasks=true&onlyFailed=true` the task resumes from its last committed offset: nothing lost, ' +
    'duplicates possible, each applied once.',
  needs: { cdc: true },
  inject: async (context) => {
    const connect = context.connect;
    const connector = connect.connectors.orders;
    const topic = systemTopics(context.stack.topicPrefix).events.orders;
    await withAdmin(connect.worker.brokers, 'chaos-topic-config', async (admin) => {
      await context.sleep(4_000);
      const overrides = await topicOverrides(admin, topic);
      await setTopicConfig(admin, topic, { ...overrides, 'max.message.bytes': REFUSING_LIMIT });
      context.fault(`${topic}: max.message.bytes=${REFUSING_LIMIT} (every record refused)`);
      const trace = await waitForFailedTask(context, connect.worker.url, connector);
      context.fault(`${connector} task FAILED: ${trace}`);
      await context.sleep(3_000); // the operator reads the alert and the trace
      await setTopicConfig(admin, topic, overrides);
      await restartFailedTasks(connect.worker.url, connector);
      context.fault(`topic fixed; POST /connectors/${connector}/restart?includeTasks=true&onlyFailed=true`);
      // The restart is asynchronous (202): the status shows the old FAILED until the worker acts.
      await waitUntilNoTaskFailed(connect.worker.url, connector);
      await awaitConnectorsRunning(context);
    });
  },
};

/** The topic's own settings (not the broker's defaults), to put back afterwards. */
async function topicOverrides(admin: Admin, topic: string): Promise<Record<string, string>> {
  const { resources } = await admin.describeConfigs({
    resources: [{ type: TOPIC_RESOURCE, name: topic }],
    includeSynonyms: false,
  });
  const entries = resources[0]?.configEntries ?? [];
  return Object.fromEntries(
    entries
      .filter((entry) => entry.configSource === TOPIC_CONFIG)
      .map((entry) => [entry.configName, entry.configValue]),
  );
}

/** AlterConfigs replaces the topic's whole set of overrides with these. */
async function setTopicConfig(admin: Admin, topic: string, config: Record<string, string>): Promise<void> {
  await admin.alterConfigs({
    validateOnly: false,
    resources: [
      {
        type: TOPIC_RESOURCE,
        name: topic,
        configEntries: Object.entries(config).map(([name, value]) => ({ name, value })),
      },
    ],
  });
}

/** Until Connect reports the connector's task FAILED; its trace's first line and its root cause. */
async function waitForFailedTask(
  context: ScenarioContext,
  connectUrl: string,
  connector: string,
  timeoutMs = 60_000,
): Promise<string> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(250)) {
    const status = await connectorStatus(connectUrl, connector).catch(() => undefined);
    const failed = status?.tasks.find((task) => task.state === 'FAILED');
    if (failed) {
      const lines = (failed.trace ?? '').split('\n');
      const cause = lines.filter((line) => line.startsWith('Caused by:')).at(-1);
      return [lines[0], cause].filter(Boolean).join(' ← ');
    }
  }
  context.log(`${connector}: no task FAILED after ${timeoutMs} ms`);
  throw new Error(`${connector}: the task did not fail within ${timeoutMs} ms of the topic refusing records`);
}

/** Until Connect no longer reports a FAILED task of the connector (restarting, then running). */
async function waitUntilNoTaskFailed(
  connectUrl: string,
  connector: string,
  timeoutMs = 30_000,
): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(100)) {
    const status = await connectorStatus(connectUrl, connector).catch(() => undefined);
    if (status && !status.tasks.some((task) => task.state === 'FAILED')) return;
  }
  throw new Error(`${connector}: a task was still FAILED ${timeoutMs} ms after the restart`);
}
