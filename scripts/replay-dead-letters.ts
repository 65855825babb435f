// Replay a dead-letter topic to the topic its messages came from, after fixing what made the
// consumer refuse them:
//   ./dev run node scripts/replay-dead-letters.ts order.events.dlt [--brokers 127.0.0.1:9092] [--timeout 60]
// It replays, per partition, the letters up to the high-water mark it reads at the start; letters
// dead-lettered while it runs are left for the next run. Progress is kept in the consumer group
// `dlt-replay.<topic>`, so a second run replays only what was dead-lettered since the first.
// Exit code 0 when it reached the mark on every partition, 1 when the timeout (seconds) ran out.
// It reaches the brokers as the services do: KAFKA_BROKERS and the KAFKA_SSL / KAFKA_SASL_* settings
// (docs/production.md), validated the same way; --brokers overrides KAFKA_BROKERS.
import { parseArgs } from 'node:util';
import { replayDeadLetters } from '@outbox/inbox';
import { kafkaBrokers, loadConfigOrExit } from '@outbox/runtime/config';
import { createKafkaClient } from '@outbox/runtime/kafka';
import { kafkaSecurity, kafkaSecuritySettings, refineKafkaSecurity } from '@outbox/runtime/kafka-security';
import { pino } from 'pino';
import { z } from 'zod';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    brokers: { type: 'string' },
    timeout: { type: 'string', default: '60' },
  },
});
const config = loadConfigOrExit(
  'replay-dead-letters',
  refineKafkaSecurity(
    z.object({ KAFKA_BROKERS: kafkaBrokers.default(['127.0.0.1:9092']), ...kafkaSecuritySettings }),
  ),
);
const timeoutSeconds = Number(values.timeout);
const topic = positionals[0];
if (!topic?.endsWith('.dlt') || !(timeoutSeconds > 0)) {
  console.error('usage: replay-dead-letters.ts <topic>.dlt [--brokers host:port,...] [--timeout <seconds>]');
  process.exit(64);
}
const kafka = createKafkaClient({
  clientId: 'dlt-replay',
  brokers: values.brokers?.split(',') ?? config.KAFKA_BROKERS,
  security: kafkaSecurity(config),
  logger: pino({ level: 'warn' }),
});
const result = await replayDeadLetters(kafka, topic, `dlt-replay.${topic}`, {
  timeoutMs: timeoutSeconds * 1000,
});
console.log(
  result.replayed === 0
    ? `nothing replayed from ${topic}`
    : `replayed ${result.replayed} message(s): ${JSON.stringify(result.byTopic)}`,
);
for (const p of result.partitions)
  console.log(
    `  partition ${p.partition}: offsets ${p.from}..${p.upTo - 1} planned, reached ${p.reached}, ${p.left} left`,
  );
if (!result.complete) {
  console.error(`timed out after ${timeoutSeconds} s before the high-water mark; run it again to go on`);
  process.exit(1);
}
