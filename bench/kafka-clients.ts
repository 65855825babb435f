/**
 * The two Kafka clients side by side, in one run: how fast one relay process drains an outbox
 * backlog, and how fast one inventory process applies a backlog of events, with KAFKA_CLIENT=kafkajs
 * and KAFKA_CLIENT=platformatic, and what CPU each process and the broker spend per event.
 *
 *   npm run bench:kafka-clients -- [--help]
 *
 * One real Kafka broker (the devstack test broker) for the whole run. Per client, a relay process
 * on an outbox and a topic of its own, started once and left idle between measurements; a
 * measurement is bench:relay's (measureRelays): a backlog committed at once, timed from its commit
 * until the last row is marked published. Per measurement a fresh inventory process on a fresh
 * consumer group over one topic that holds the backlog (bench/kafka-clients/consumerApply.ts). Each round measures both clients, in the order
 * kafkajs, platformatic in rounds 1, 3, … and the reverse in rounds 2, 4, …, so neither always
 * runs first on a machine whose load drifts; the ratio platformatic ÷ kafkajs is paired per round
 * and the median over rounds is reported. A client a process does not know yet is ignored by its
 * config (the variable is passed whatever the process does with it).
 * Writes bench/results/kafka-clients/kafka-clients.<label>.json and .md (scripts/figures/kafkaClients.ts renders
 * them into the docs). Capacity and idle CPU per client: docs/benchmarks.md#the-kafka-clients-side-by-side.
 */
import { codeRevision } from '@outbox/chaos/revision';
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import type { KafkaClientName } from '@outbox/runtime/kafka';
import { fixKafkajsIdleTimerLoop } from '@outbox/runtime/kafka/kafkajs';
import {
  type ApplyFixture,
  apply,
  startApplyFixture,
  stopApplyFixture,
} from './kafka-clients/consumerApply.ts';
import { bench, CLIENTS, log, out, params } from './kafka-clients/params.ts';
import { type ClientRound, markdownReport, type Report, summarize } from './kafka-clients/report.ts';
import { measureRelays, type RelayFixture, relayFixture, stopRelayFixture } from './relay/measureRelays.ts';
import { loadavg } from './support/environment.ts';
import { benchBrokerInfo, benchKafka, startBenchBroker } from './support/kafka.ts';
import { rotated, round } from './support/stats.ts';

fixKafkajsIdleTimerLoop();
const startedAt = Date.now();
const report: Report = {
  ...(await bench.header(testPostgresUrl)),
  label: bench.args.label,
  revision: codeRevision(),
  kafka: benchBrokerInfo(),
  parameters: params,
  loadavgBefore: loadavg(),
  loadavgAfter: [],
  durationSec: 0,
  rounds: [],
  metrics: [],
};

log('starting the broker');
const broker = await startBenchBroker('bench-kafka-clients');
const brokers = broker.broker.brokers;
const brokerPid = broker.broker.pid ?? 0;
const kafka = benchKafka('bench-kafka-clients', brokers);
const relays = new Map<string, RelayFixture>();
/** `events` rows drained by the client's relay; its CPU is the `relays` group of the result. */
const drain = (client: KafkaClientName, events: number, round: number) => {
  const variant = {
    key: client,
    label: `relay on ${client}`,
    kind: 'relay',
    count: 1,
    stats: 'fresh',
  } as const;
  return measureRelays(relays.get(client) as RelayFixture, variant, events, round, brokerPid);
};
let consumers: ApplyFixture | undefined;
try {
  for (const client of CLIENTS) {
    log(`starting a relay on ${client}`);
    const settings = { ...params, env: { KAFKA_CLIENT: client } };
    relays.set(
      client,
      await relayFixture(kafka, brokers, 1, settings, params.pollIntervalMs, `kafka-clients-${client}`),
    );
  }
  consumers = await startApplyFixture(kafka, brokers);
  log(`warm-up: ${params.warmupEvents} rows per relay`);
  for (const client of CLIENTS) await drain(client, params.warmupEvents, -1);
  for (let r = 0; r < params.rounds; r++) {
    const order = rotated(CLIENTS, r);
    const drained = new Map<string, ClientRound['relay']>();
    for (const client of order) drained.set(client, await drain(client, params.relayEvents, r));
    for (const client of order) {
      const consumer = await apply(consumers, client, r, brokerPid);
      const relay = drained.get(client) as ClientRound['relay'];
      report.rounds.push({ round: r, client, relay, consumer });
      log(
        `round ${r + 1}/${params.rounds} ${client}: relay ${relay.eventsPerSec.toFixed(0)}/s, consumer ${consumer.eventsPerSec.toFixed(0)}/s`,
      );
    }
  }
} finally {
  for (const fixture of relays.values()) await stopRelayFixture(fixture);
  if (consumers) await stopApplyFixture(consumers);
  await broker.dispose();
}
report.loadavgAfter = loadavg();
report.durationSec = round((Date.now() - startedAt) / 1000, 1);
report.metrics = summarize(report.rounds);
bench.write(report, markdownReport(report), 'off', out);
