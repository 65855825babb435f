/**
 * The relay side: one real relay process per client, each on an outbox and a topic of its own,
 * started once and left idle between measurements; a measurement is bench:relay's (measureRelays):
 * a backlog committed at once, timed from its commit until the last row is marked published.
 */
import type { KafkaClientName } from '@outbox/runtime/kafka';
import type { Kafka } from 'kafkajs';
import { measureRelays, type RelayFixture, relayFixture } from '../relay/measureRelays.ts';
import { startRelays } from '../relay/relays.ts';
import type { ThroughputRound } from '../relay/throughputVariants.ts';
import { params } from './params.ts';

export async function startRelayFixture(
  kafka: Kafka,
  brokers: string[],
  client: KafkaClientName,
): Promise<RelayFixture> {
  const settings = { ...params, env: { KAFKA_CLIENT: client } };
  const fixture = await relayFixture(kafka, 1, settings, `kafka-clients-${client}`);
  try {
    fixture.relays = await startRelays(
      fixture.db,
      brokers,
      fixture.prefix,
      1,
      params.pollIntervalMs,
      `bench-kc-relay-${client}`,
      settings,
    );
  } catch (err) {
    await stopRelayFixture(fixture);
    throw err;
  }
  return fixture;
}

export async function stopRelayFixture(fixture: RelayFixture): Promise<void> {
  await Promise.allSettled(fixture.relays.map((relay) => relay.process.stop()));
  await fixture.admin.end().catch(() => {});
  await fixture.db.drop();
}

/** `events` rows drained by the client's relay; its CPU is the `relays` group of the result. */
export function drain(
  fixture: RelayFixture,
  client: KafkaClientName,
  events: number,
  round: number,
  brokerPid: number,
): Promise<ThroughputRound> {
  const variant = { key: client, label: `relay on ${client}`, kind: 'relay' as const, count: 1 };
  return measureRelays(fixture, { ...variant, stats: 'fresh' }, events, round, brokerPid);
}
