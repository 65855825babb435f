/**
 * Relay benchmark: how many events per second do 1, 2 and 4 relays publish, compared with a bare
 * kafkajs producer sending the same messages to the same broker (the ceiling), and what is the
 * commit-to-broker-ack latency at a steady offered load, with and without NOTIFY?
 *
 *   node bench/relay-throughput.ts [--help]
 *
 * One real Kafka broker (the devstack test broker) for the whole benchmark; per run, fresh
 * databases with the shared migrations and real relay processes (`node apps/relay/src/main.ts`).
 *
 * Throughput: every relay variant has its own database, topic and K relay processes, started once
 * per run and left idle between measurements. A measurement truncates that outbox, inserts N
 * events over A aggregates in one statement (one NOTIFY, the relays wake at its commit) and times
 * from the commit until the last row is marked published (both on the database clock). The bare
 * producer variants send the same N messages (toKafkaMessage of the same kind of rows, built in
 * advance) with 1 or P idempotent producers configured like the relay's (acks=-1, one request in
 * flight), in batches of the relay's batch size. Variants are interleaved: each round runs every
 * variant once in an order that rotates from round to round; ratios are paired per round and the
 * median over rounds is reported (with --runs N, the median of the per-run medians too).
 *
 * Planner statistics: the R variants run ANALYZE in the backlog's transaction (the planner knows
 * the backlog); the S variants keep the statistics of the drained outbox, as a backlog after an
 * outage meets them. The claim probe runs the claim statement alone (no Kafka) in both states,
 * for the production query and for the NOT EXISTS form it replaced (see notExistsClaimKeptForComparisonSql in bench/relay/claimProbe.ts).
 *
 * Latency: one relay per database; a load generator in this process inserts events at a steady
 * offered rate (open loop, small transactions) for --latency-seconds; latency per event is
 * published_at − created_at from the outbox table (both the database clock). Modes: NOTIFY on
 * (poll 1000 ms, production default), NOTIFY trigger disabled with poll 1000 ms, and disabled with
 * poll 100 ms. Cells (mode × rate) rotate per round. Each cell also counts the relay's claim
 * statements and batches (its step metric) per event published: at low rates, claims that find
 * nothing are the relay's main cost.
 *
 * The parts: bench/relay/: params, relays (the processes), backlog, throughputVariants, measureRelays,
 * bareProducers, throughput, claimProbe, latency, summary, report.
 * Not a test: it prints a table and writes <out>.json and <out>.md.
 */
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { claimProbe } from './relay/claimProbe.ts';
import { latencyPhase } from './relay/latency.ts';
import { bench, log, modeInfo, params } from './relay/params.ts';
import { anchors, markdownReport, type Report, type RunResult } from './relay/report.ts';
import { summarizeRun } from './relay/summary.ts';
import { throughputPhase } from './relay/throughput.ts';
import { throughputVariants } from './relay/throughputVariants.ts';
import { benchBrokerInfo, startBenchBroker } from './support/kafka.ts';
import { measureRuns } from './support/runs.ts';

const report: Report = {
  ...(await bench.header(testPostgresUrl)),
  kafka: benchBrokerInfo(),
  parameters: params,
  throughputVariants,
  latencyModes: modeInfo,
  anchors,
  runs: [],
  acrossRuns: {},
};

log('starting the broker');
const broker = await startBenchBroker('bench-relay');
try {
  const brokers = broker.broker.brokers;
  const brokerPid = broker.broker.pid ?? 0;
  await measureRuns(
    report,
    params.runs,
    async (run): Promise<RunResult> => {
      const throughputRounds = params.throughput ? await throughputPhase(run, brokers, brokerPid) : [];
      const claimProbeRounds = params.claimProbe ? await claimProbe(run) : [];
      const latencyRounds = params.latency ? await latencyPhase(run, brokers, brokerPid) : [];
      const summary = summarizeRun(throughputRounds, claimProbeRounds, latencyRounds);
      return { throughputRounds, claimProbeRounds, latencyRounds, summary };
    },
    log,
  );
} finally {
  await broker.dispose();
}

bench.write(report, markdownReport(report), 'off');
