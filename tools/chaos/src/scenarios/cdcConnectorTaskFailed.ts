import { setTimeout as sleep } from 'node:timers/promises';
import { connectorStatus, restartFailedTasks } from '@outbox/devstack/connect-rest';
import { fixKafkajsIdleTimerLoop } from '@outbox/runtime/kafka/kafkajs';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import type { Scenario, ScenarioContext } from '../scenario.ts';
import { systemTopics } from '../topics.ts';
import { awaitConnectorsRunning, ownConnect } from './support.ts';

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
    const connect = ownConnect(context);
    const connector = connect.connectors.orders;
    const topic = systemTopics(context.stack.topicPrefix).events.orders;
    fixKafkajsIdleTimerLoop();
    const admin = new Kafka({
      clientId: 'chaos-topic-config',
      brokers: connect.worker.brokers,
      logLevel: logLevel.NOTHING,
    }).admin();
    await admin.connect();
    try {
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
    } finally {
      await admin.disconnect();
    }
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
