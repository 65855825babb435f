import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectVersions } from '../src/jars.ts';
import { isProcessAlive } from '../src/processes.ts';
import { sharedKafkaBrokers } from '../src/testing/testBroker.ts';
import { startTestConnectWorker, type TestConnectWorker } from '../src/testing/testConnectWorker.ts';

// Repeated here (not only in vitest.config.ts) so the file also works from the repo root.
const hookTimeout = 180_000;

/**
 * The CDC relay's worker (docs/design.md#polling-or-cdc): a real Kafka Connect worker from
 * Maven-resolved jars, in distributed mode on the run's broker, with Debezium's PostgreSQL
 * connector and the outbox router on its classpath.
 */
describe('ConnectWorker', () => {
  let connect: TestConnectWorker;
  let startedPid: number | undefined;

  beforeAll(async () => {
    connect = await startTestConnectWorker('devstack-connect', sharedKafkaBrokers());
    startedPid = connect.worker.pid;
  }, hookTimeout);

  afterAll(async () => {
    await connect?.dispose();
    expect(connect?.worker.isRunning()).toBe(false);
    if (startedPid !== undefined) expect(isProcessAlive(startedPid)).toBe(false);
  }, hookTimeout);

  it('answers on its REST API with the broker’s Kafka version', async () => {
    const res = await fetch(`${connect.worker.url}/`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { version: string; kafka_cluster_id: string };
    expect(body.version).toBe(connectVersions().kafka);
    expect(body.kafka_cluster_id).toMatch(/\S+/);
  });

  it('has Debezium’s PostgreSQL connector and the outbox router on its classpath', async () => {
    const plugins = (await (
      await fetch(`${connect.worker.url}/connector-plugins?connectorsOnly=false`)
    ).json()) as { class: string; version: string }[];
    const classes = plugins.map((plugin) => plugin.class);
    expect(classes).toContain('io.debezium.connector.postgresql.PostgresConnector');
    expect(classes).toContain('io.debezium.transforms.outbox.EventRouter');
    expect(classes).toContain('org.apache.kafka.connect.transforms.InsertHeader');
    const postgres = plugins.find((plugin) => plugin.class.endsWith('PostgresConnector'));
    expect(postgres?.version).toBe(connectVersions().debezium);
  });

  it('keeps its state in its own internal topics on the broker', async () => {
    const admin = new Kafka({
      clientId: 'connect-test',
      brokers: sharedKafkaBrokers(),
      logLevel: logLevel.NOTHING,
    }).admin();
    await admin.connect();
    try {
      const topics = await admin.listTopics();
      expect(topics).toEqual(expect.arrayContaining(Object.values(connect.worker.internalTopics)));
    } finally {
      await admin.disconnect();
    }
  });
});
