// npm run bench:kafka-failover [-- --help]
// Acknowledged means in the log? Each producer sends 20,000 messages in batches of 100 (acks=all)
// to a topic at replication factor 3 / min.insync.replicas 2 on a real three-node cluster, while
// partition 0's leader is killed with kill -9 before batch 80; then the topic is read back and
// every acknowledged message looked for. Side by side, in one run: a bare kafkajs producer as its
// README shows it, the same idempotent with one request in flight, and the relay's publisher.
// Writes bench/results/kafka-failover/kafka-failover.{json,md}.

import { ORDER_CANCELLED, topicFor } from '@outbox/contracts';
import { markdownTableLinesOf } from '@outbox/devstack/table';
import { orderEnvelope } from '@outbox/devstack/testing/order-envelope';
import { startTestCluster } from '@outbox/devstack/testing/test-broker';
import { readTopic } from '@outbox/devstack/testing/topic-reader';
import { KafkaPublisher } from '@outbox/relay/publisher';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { pino } from 'pino';
import { defineBench, int } from './support/bench.ts';

const bench = defineBench({
  name: 'kafka-failover',
  about:
    'Acknowledged means in the log? A partition leader killed with kill -9 mid-stream on a three-node ' +
    "cluster, for a bare kafkajs producer, the same idempotent, and the relay's publisher.",
  options: { runs: int(2, 'runs; each sends with every producer') },
});
const { runs } = bench.args;
const batches = 200;
const batchSize = 100;
const killBeforeBatch = 80;
const quiet = pino({ level: 'silent' });

/** A send that failed and was sent again, by the error's name. */
type Failures = Record<string, number>;
type Send = { send(batch: number, failures: Failures): Promise<string[]>; close(): Promise<void> };
type Producer = { name: string; open(brokers: string[], prefix: string): Promise<{ topic: string } & Send> };

const aKey = (n: number) => `00000000-0000-4000-8000-${String(n % 500).padStart(12, '0')}`;

/** kafkajs' own producer: every message a string id; the topic made at RF 3 beforehand. */
function bareKafkajs(name: string, options: { idempotent: boolean }): Producer {
  return {
    name,
    async open(brokers, prefix) {
      // kafkajs' defaults (5 retries from 300 ms), as a newcomer would construct it.
      const kafka = new Kafka({ clientId: 'bench-failover', brokers, logLevel: logLevel.NOTHING });
      const topic = `${prefix}bare`;
      const admin = kafka.admin();
      await admin.connect();
      await admin.createTopics({
        waitForLeaders: true,
        topics: [{ topic, numPartitions: 6, replicationFactor: 3 }],
      });
      await admin.disconnect();
      const producer = kafka.producer({
        createPartitioner: Partitioners.DefaultPartitioner,
        ...(options.idempotent ? { idempotent: true, maxInFlightRequests: 1 } : {}),
      });
      await producer.connect();
      return {
        topic,
        async send(batch) {
          const ids = Array.from({ length: batchSize }, (_, i) => `${batch * batchSize + i}`);
          await producer.send({
            topic,
            acks: -1,
            messages: ids.map((id, i) => ({
              key: aKey(batch * batchSize + i),
              value: id,
              headers: { ce_id: id },
            })),
          });
          return ids;
        },
        close: () => producer.disconnect(),
      };
    },
  };
}

/** The relay's publisher, as the relay uses it: a failed batch is sent again, whole. */
const relayPublisher: Producer = {
  name: "the relay's KafkaPublisher",
  async open(brokers, prefix) {
    const publisher = new KafkaPublisher({
      clientId: 'bench-failover',
      brokers,
      topicPrefix: prefix,
      topicLayout: { partitions: 6, replicationFactor: 3 },
      logger: quiet,
    });
    return {
      topic: topicFor('order', prefix),
      async send(batch, failures) {
        const events = Array.from({ length: batchSize }, (_, i) =>
          orderEnvelope(ORDER_CANCELLED, { orderId: aKey(batch * batchSize + i), reason: 'bench' }),
        );
        for (;;) {
          try {
            await publisher.publish(events);
            return events.map((event) => event.id);
          } catch (error) {
            // Sent again, as the relay would after its backoff. UnacknowledgedPartitionsError: kafkajs
            // resolved the batch without a partition, and only the publisher's check caught it.
            const name = error instanceof Error ? error.name : 'unknown';
            failures[name] = (failures[name] ?? 0) + 1;
          }
        }
      },
      close: () => publisher.disconnect(),
    };
  },
};

const producers = [
  bareKafkajs('kafkajs, as its README shows it', { idempotent: false }),
  bareKafkajs('kafkajs, idempotent, 1 request in flight', { idempotent: true }),
  relayPublisher,
];

type Row = {
  failures: Failures;
  producer: string;
  run: number;
  killed: number;
  acknowledged: number;
  inLog: number;
  lost: number;
  duplicates: number;
};
const rows: Row[] = [];
const started = new Date();
const { cluster, dispose } = await startTestCluster('bench-failover');
try {
  for (let run = 1; run <= runs; run++) {
    for (const producer of producers) {
      const prefix = `failover-${run}-${rows.length}-`;
      const sender = await producer.open(cluster.brokers, prefix);
      const acknowledged = new Set<string>();
      const failures: Failures = {};
      let killed = 0;
      let fault: Promise<boolean> | undefined;
      for (let batch = 0; batch < batches; batch++) {
        if (batch === killBeforeBatch) {
          killed = await cluster.leaderOf(sender.topic, 0);
          fault = cluster.node(killed).kill();
        }
        for (const id of await sender.send(batch, failures)) acknowledged.add(id);
      }
      await fault;
      await sender.close();
      const live = cluster.nodes.filter((node) => node.isRunning()).flatMap((node) => node.brokers);
      const log = await readTopic(live, sender.topic, { timeoutMs: 120_000 });
      const ids = new Set(log.map((message) => message.eventId));
      const row: Row = {
        producer: producer.name,
        run,
        killed,
        acknowledged: acknowledged.size,
        inLog: log.length,
        lost: [...acknowledged].filter((id) => !ids.has(id)).length,
        duplicates: log.length - ids.size,
        failures,
      };
      rows.push(row);
      console.log(JSON.stringify(row));
      await cluster.node(killed).start();
      await cluster.waitUntilReady(180_000);
    }
  }
} finally {
  await dispose();
}

const md = [
  '# Acknowledged means in the log? A leader killed mid-stream',
  '',
  `Run ${started.toISOString()} by \`npm run bench:kafka-failover -- --runs ${runs}\`: a three-node KRaft cluster ` +
    `(Kafka from the devstack's jars, RF 3, min.insync.replicas 2, unclean election off), ${batches * batchSize} ` +
    `messages in batches of ${batchSize} with acks=all over 500 keys and 6 partitions, kill -9 of partition 0's ` +
    `leader before batch ${killBeforeBatch}, then the topic read back by message id.`,
  '',
  ...markdownTableLinesOf(rows, {
    producer: (r) => r.producer,
    run: (r) => r.run,
    'broker killed': (r) => r.killed,
    acknowledged: (r) => r.acknowledged,
    'in the log': (r) => r.inLog,
    lost: (r) => r.lost,
    duplicates: (r) => r.duplicates,
    'failed sends, sent again': (r) => failureText(r.failures),
  }),
  '',
];
bench.write({ started, runs, batches, batchSize, killBeforeBatch, rows }, md.join('\n'), 'off');

function failureText(failures: Failures): string {
  const text = Object.entries(failures).map(([name, count]) => `${count} ${name}`);
  return text.length > 0 ? text.join(', ') : '–';
}
