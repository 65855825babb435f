import { Kafka, logLevel } from 'kafkajs';

/**
 * One readiness probe: can a client connect and read cluster metadata? A KRaft broker opens its
 * client listener only once it is unfenced, and serves metadata only once it caught up with the
 * controller, so this succeeding means producers and consumers can start.
 *
 * Short timeouts and no retries: the caller polls, and a probe must never outlive its deadline.
 */
export async function probeKafka(brokers: string[], timeoutMs = 2000): Promise<void> {
  const kafka = new Kafka({
    clientId: 'devstack-readiness-probe',
    brokers,
    connectionTimeout: Math.min(1000, timeoutMs),
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
    // Refused connections are the expected answer while the broker boots; do not log them.
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    await admin.listTopics();
  } finally {
    await admin.disconnect().catch(() => {});
  }
}
