/** The throughput phase: every variant's fixture once, a warm-up, then interleaved rounds. */
import { benchKafka } from '../support/kafka.ts';
import { rotated } from '../support/stats.ts';
import { buildMessages } from './backlog.ts';
import {
  kafkajsFixture,
  measurePlatformatic,
  measureProducers,
  type PlatformaticFixture,
  type ProducerFixture,
  platformaticFixture,
} from './bareProducers.ts';
import { measureRelays, type RelayFixture, relayFixture, stopRelayFixture } from './measureRelays.ts';
import { log, params } from './params.ts';
import { type ThroughputRound, type ThroughputVariant, throughputVariants } from './throughputVariants.ts';

export async function throughputPhase(run: number, brokers: string[], brokerPid: number) {
  log(`run ${run}: building ${params.events} messages for the bare producers`);
  const messages = await buildMessages(params.events, params.aggregates);
  const kafka = benchKafka('bench-relay-throughput', brokers);
  const relayFixtures = new Map<number, RelayFixture>();
  const producerFixtures: ProducerFixture[] = [];
  const platformaticFixtures: PlatformaticFixture[] = [];
  const rounds: ThroughputRound[] = [];
  try {
    for (const variant of throughputVariants) {
      if (variant.kind === 'relay') {
        if (relayFixtures.has(variant.count)) continue;
        log(`run ${run}: starting ${variant.count} relay(s)`);
        const fixture = await relayFixture(
          kafka,
          brokers,
          variant.count,
          params,
          params.throughputPollIntervalMs,
        );
        relayFixtures.set(variant.count, fixture);
      } else if (variant.kind === 'platformatic') {
        platformaticFixtures.push(await platformaticFixture(kafka, brokers, variant));
      } else {
        producerFixtures.push(await kafkajsFixture(kafka, variant));
      }
    }

    const eventsFor = (variant: ThroughputVariant) =>
      variant.stats === 'stale' ? params.staleEvents : params.events;
    const measure = (variant: ThroughputVariant, r: number, events: number) => {
      if (variant.kind === 'relay')
        return measureRelays(relayFixtures.get(variant.count) as RelayFixture, variant, events, r, brokerPid);
      if (variant.kind === 'platformatic') {
        const fixture = platformaticFixtures.find((f) => f.variant === variant) as PlatformaticFixture;
        return measurePlatformatic(fixture, messages.slice(0, events), r, brokerPid);
      }
      const producer = producerFixtures.find((f) => f.variant === variant) as ProducerFixture;
      return measureProducers(producer, messages.slice(0, events), r, brokerPid);
    };

    // Warm-up: every variant once with a small backlog (JIT, connections, topic metadata).
    log(`run ${run}: throughput warm-up (${params.warmupEvents} events per variant)`);
    // The stale variants use the same relays as the fresh ones: warmed up with them.
    for (const variant of throughputVariants)
      if (variant.stats !== 'stale') await measure(variant, -1, params.warmupEvents);

    for (let r = 0; r < params.rounds; r++) {
      const line: string[] = [];
      for (const variant of rotated(throughputVariants, r)) {
        const result = await measure(variant, r, eventsFor(variant));
        rounds.push(result);
        line.push(`${variant.key} ${result.eventsPerSec.toFixed(0)}/s`);
      }
      log(`run ${run}: throughput round ${r + 1}/${params.rounds}: ${line.join(', ')}`);
    }
    return rounds;
  } finally {
    for (const fixture of producerFixtures)
      await Promise.allSettled(fixture.producers.map((p) => p.disconnect()));
    for (const fixture of platformaticFixtures)
      await Promise.allSettled(fixture.producers.map((p) => p.close()));
    for (const fixture of relayFixtures.values()) await stopRelayFixture(fixture);
  }
}
