// Replay a dead-letter topic to the topic its messages came from, after fixing what made the
// consumer refuse them:
//   ./dev run node scripts/replay-dead-letters.ts order.events.dlt [--brokers 127.0.0.1:9092]
// Progress is kept in the consumer group `dlt-replay.<topic>`, so a second run replays only
// what was dead-lettered since the first.
import { parseArgs } from 'node:util';
import { replayDeadLetters } from '@outbox/inbox';
import { createKafka } from '@outbox/runtime/kafka';
import { pino } from 'pino';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { brokers: { type: 'string', default: process.env.KAFKA_BROKERS ?? '127.0.0.1:9092' } },
});
const topic = positionals[0];
if (!topic?.endsWith('.dlt')) {
  console.error('usage: replay-dead-letters.ts <topic>.dlt [--brokers host:port,...]');
  process.exit(64);
}
const kafka = createKafka({
  clientId: 'dlt-replay',
  brokers: values.brokers.split(','),
  logger: pino({ level: 'warn' }),
});
const result = await replayDeadLetters(kafka, topic, `dlt-replay.${topic}`);
console.log(
  result.replayed === 0
    ? `nothing new on ${topic}`
    : `replayed ${result.replayed} message(s): ${JSON.stringify(result.byTopic)}`,
);
