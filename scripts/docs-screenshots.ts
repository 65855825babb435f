// npm run docs:screenshots [-- <part> ...] — the pictures of the docs, taken again from real demos.
// Each part starts a demo (scripts/demo.ts, on ports of its own: Kafka, Zipkin, Prometheus, the
// apps and the console), drives its console in a headless Chromium as the walkthrough tells a
// reader to, with the load generator where the text speaks of load, and screenshots the panel the
// text is about into docs/images/. docs/images/manifest.json records the banners each picture
// shows (tests/docs checks the text mentions them). Parts: demo (steps 1-8 and 11), cluster
// (step 9), cdc (step 10), bare (the console without Prometheus and Zipkin), failover and
// failover-unguarded (step 12). Default: all six. One more, `compose`, runs only when named: the
// console of the compose stack (`./dev compose up`, docs/docker.md), which needs Docker.
// Needs what the demo needs, with Prometheus installed, and Debian's chromium. On a busy 2-core
// machine the demo part took about 12 minutes, the others 2 to 6 each.
import { readManifest, writeManifest } from './docs-screenshots/capture.ts';
import { composeScenes, startCompose } from './docs-screenshots/composeRun.ts';
import { openConsolePage, type Shots } from './docs-screenshots/consolePage.ts';
import { type DemoRun, startDemo } from './docs-screenshots/demoRun.ts';
import { failoverGuardedScenes, failoverUnguardedScenes } from './docs-screenshots/failoverScenes.ts';
import { bareScenes, cdcScenes, clusterScenes, demoScenes } from './docs-screenshots/parts.ts';

type Part = {
  env: Record<string, string>;
  scenes: (shots: Shots) => Promise<void>;
  /** Instead of a demo: what serves the console (the compose part's stack). */
  start?: () => Promise<DemoRun>;
  /** Left out of the default run: taken only when named. */
  onlyWhenNamed?: boolean;
};

const PARTS: Record<string, Part> = {
  demo: { env: {}, scenes: demoScenes },
  cluster: { env: { DEMO_KAFKA: 'cluster' }, scenes: clusterScenes },
  cdc: { env: { RELAY_MODE_ORDERS: 'debezium' }, scenes: cdcScenes },
  bare: { env: { DEMO_PROMETHEUS: 'off', DEMO_TRACING: 'off' }, scenes: bareScenes },
  failover: { env: { DEMO_FAILOVER: 'async', DEMO_PROMETHEUS: 'off' }, scenes: failoverGuardedScenes },
  'failover-unguarded': {
    env: { DEMO_FAILOVER: 'async', DEMO_STANDBY_WAIT: 'off', DEMO_PROMETHEUS: 'off' },
    scenes: failoverUnguardedScenes,
  },
  compose: { env: {}, scenes: composeScenes, start: startCompose, onlyWhenNamed: true },
};

const asked = process.argv.slice(2);
const unknown = asked.filter((part) => !(part in PARTS));
if (unknown.length > 0) {
  console.error(`unknown part ${unknown.join(', ')}: the parts are ${Object.keys(PARTS).join(', ')}`);
  process.exit(64);
}

const failed: string[] = [];
const byDefault = Object.keys(PARTS).filter((name) => !PARTS[name]?.onlyWhenNamed);
for (const name of asked.length > 0 ? asked : byDefault) {
  const part = PARTS[name];
  if (!part) continue;
  const manifest = readManifest();
  const run = part.start ? await part.start() : await startDemo(name, part.env);
  const shots = await openConsolePage(run, manifest);
  try {
    await part.scenes(shots);
  } catch (error) {
    failed.push(name);
    console.error(`${name}: ${error instanceof Error ? error.stack : String(error)}`);
  } finally {
    // What was taken before a failure is as true as the rest: keep it.
    writeManifest(manifest);
    await shots.browser.close();
    await run.stop();
  }
}
if (failed.length > 0) {
  console.error(`not every picture was taken: ${failed.join(', ')} failed (above)`);
  process.exit(1);
}
