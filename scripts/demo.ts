// The local demo without Docker: `./dev demo` (or `npm run demo` once set up).
// Starts the project's own Kafka broker, then the four apps against the local PostgreSQL (an
// embedded one when none answers; each service creates and migrates its own database), the web
// console (with the demo's stop / kill -9 / start controls, which only this script can offer
// because only it owns the processes), Zipkin (the services export their traces to it), and
// Prometheus when it is installed. Prints the logs (read from the services' log files, so printing
// never slows a service) and the URLs, and stops everything it started on Ctrl-C.
//
// Its parts, in the order they run: settings.ts (what and where), backingServices.ts (PostgreSQL,
// Kafka, Zipkin, Prometheus), apps.ts (the four apps and their relays), consoleWiring.ts (the
// console and its buttons), banner.ts (what to do next), lifecycle.ts (stopping it all).

import { superviseZipkin } from '@outbox/devstack/supervisor';
import { autovacuumWarning, SHOW_AUTOVACUUM } from '@outbox/runtime/database';
import { fixKafkajsIdleTimerLoop } from '@outbox/runtime/kafka/kafkajs';
import pg from 'pg';
import { appStarter, databaseUrlsOn, startApps } from './demo/apps.ts';
import {
  choosePostgres,
  startKafka,
  startPrometheus,
  startZipkin,
  zipkinReady,
} from './demo/backingServices.ts';
import { banner } from './demo/banner.ts';
import { startDemoConsole } from './demo/consoleWiring.ts';
import { pairDatabaseUrls, startDatabasePairs } from './demo/databasePairs.ts';
import { databaseFailover } from './demo/failoverControl.ts';
import { fail, running, stopAllOnExit } from './demo/lifecycle.ts';
import { print, say, survivePipeClosing } from './demo/output.ts';
import { environmentWithFile } from './demo/passOnRules.ts';
import { type DemoSettings, orRefuse, readSettings } from './demo/settings.ts';

/**
 * PostgreSQL (with --failover, a primary and a standby per service database), Kafka and Zipkin,
 * the latter booting while the broker does.
 */
async function startBackingServices(settings: DemoSettings) {
  const pairs = settings.failover ? await startDatabasePairs(settings) : undefined;
  const postgres = pairs ? pairs.orders.url.replace(/\/postgres$/, '') : await choosePostgres(settings);
  fixKafkajsIdleTimerLoop(); // the broker's readiness probe uses kafkajs
  // Zipkin's JVM boots while the broker does. (After broker.start(): two Maven downloads at once,
  // on a fresh machine, would share one local repository.)
  const kafka = await startKafka(settings, () => {
    running.zipkinStarting = startZipkin(settings);
  });
  const zipkin = await zipkinReady(await running.zipkinStarting);
  running.zipkin = zipkin;
  if (zipkin) {
    print(
      `Zipkin is ready at ${zipkin.url} (keeps the newest ${zipkin.maxSpans} spans in a ${zipkin.heapMb} MiB heap)`,
    );
    // If it dies (it should not: its bound fits its heap, docs/tracing.md), it is started again.
    running.zipkinSupervisor = superviseZipkin(zipkin, { report: (message) => say('zipkin', message) });
  }
  return { postgres, pairs, kafka, zipkin };
}

async function main(): Promise<void> {
  survivePipeClosing();
  stopAllOnExit();
  // With `--env FILE`'s variables under the environment; a file that cannot be read stops the demo.
  const env = orRefuse(() => environmentWithFile(process.env, process.argv));
  const settings = readSettings(env, process.argv);
  const { postgres, pairs, kafka, zipkin } = await startBackingServices(settings);
  const databaseUrls = pairs ? pairDatabaseUrls(pairs) : databaseUrlsOn(postgres);
  const start = appStarter(settings, databaseUrls, kafka.brokers, zipkin);
  await startApps(settings, databaseUrls, kafka.brokers, start);
  running.prometheus = await startPrometheus(settings);
  running.consoleApp = await startDemoConsole({
    settings,
    databaseUrls,
    kafka,
    zipkin,
    prometheusUrl: running.prometheus ? `http://127.0.0.1:${settings.prometheusPort}` : undefined,
    start,
    ...(pairs ? { databases: databaseFailover(settings, pairs, kafka.brokers) } : {}),
  });
  print(banner(settings, postgres, databaseUrls, kafka.brokers));
  const autovacuum = await autovacuumOf(`${postgres}/postgres`);
  if (autovacuum) say('postgres', `warning: ${autovacuum}`);
}

/** The warning for the demo's PostgreSQL when it runs with autovacuum off (a warning only). */
async function autovacuumOf(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    const { rows } = await client.query<{ autovacuum: string }>(SHOW_AUTOVACUUM);
    return autovacuumWarning(rows[0]?.autovacuum);
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}

await main().catch(fail);
