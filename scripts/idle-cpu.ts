// CPU used by each process of a running `./dev demo` of this checkout over one window:
//
//   node scripts/idle-cpu.ts [--seconds 20] [--out bench/results/idle-cpu/idle-cpu]
//
// Counts the demo process (with its console), the services and relays, the Kafka JVM, Zipkin and
// Prometheus, and records the Kafka client the services and relays run on (their KAFKA_CLIENT:
// `KAFKA_CLIENT=platformatic ./dev demo` to measure the other one); PostgreSQL is shared with everything else on the machine and left out. Reads
// utime+stime from /proc/<pid>/stat at the start and the end of the window, so kernel time
// (wake-ups, socket writes) counts too. Prints a table; with --out it also writes <out>.json and
// <out>.md, which docs/performance.md renders its idle table from.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { markdownTableLines } from '@outbox/devstack/table';
import { positiveNumber } from '../bench/support/args.ts';
import { procTicks, TICKS_PER_SECOND } from '../bench/support/cpu.ts';
import { loadavg, type MachineInfo, machineInfo, writeResults } from '../bench/support/environment.ts';
import { round } from '../bench/support/stats.ts';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    out: { type: 'string' },
  },
});
const seconds = positiveNumber('seconds', args.seconds);
const root = resolve(import.meta.dirname, '..');

type DemoProcess = { pid: number; name: string };

/** What this script writes with --out (`<out>.json`, beside the run record): each process's share of a core. */
export type IdleCpu = {
  date: string;
  machine: MachineInfo;
  node: string;
  /** The last commit that changed what the demo runs, `+changes` when the checkout differs from it. */
  revision: string;
  seconds: number;
  kafkaClient: string;
  demoUptimeSeconds?: number;
  loadavg: { before: number[]; after: number[] };
  processes: { name: string; cpuMs: number; percentOfCore: number }[];
  total: { cpuMs: number; percentOfCore: number };
};

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return ''; // the process exited while we looked
  }
}

/** What a demo process of this checkout is, from its command line; undefined for anything else. */
function demoProcessName(pid: number): string | undefined {
  const command = read(`/proc/${pid}/cmdline`).split('\0').join(' ');
  if (/\bnode scripts\/demo\.ts\b/.test(command)) return cwdIsRoot(pid) ? 'the demo process' : undefined;
  const app = new RegExp(`${root}/apps/([a-z]+)/src/main\\.ts`).exec(command)?.[1];
  if (app === 'relay') {
    const id = /(?:^|\0)RELAY_ID=([^\0]*)/.exec(read(`/proc/${pid}/environ`))?.[1];
    return id ?? 'relay';
  }
  if (app) return app;
  if (command.includes(`${root}/.local/kafka/demo/server.properties`)) return 'Kafka JVM';
  if (command.includes(`${root}/.local/zipkin/lib/zipkin-server`)) return 'Zipkin JVM';
  if (/prometheus --config\.file=\.local\/prometheus/.test(command) && cwdIsRoot(pid)) return 'Prometheus';
  return undefined;
}

/** Whether a process runs in this checkout: the demo and Prometheus are found by relative paths. */
function cwdIsRoot(pid: number): boolean {
  try {
    return readlinkSync(`/proc/${pid}/cwd`) === root;
  } catch {
    return false;
  }
}

const DEMO_CODE = [
  'apps',
  'packages',
  'tools',
  'infra',
  'scripts/demo',
  'scripts/demo.ts',
  'package-lock.json',
];
const git = (args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

/** The order of the report: the services, their relays, then what serves them. */
const ORDER = [
  'orders',
  'inventory',
  'billing',
  'relay-orders',
  'relay-inventory',
  'relay-billing',
  'the demo process',
];
const rank = (name: string) => (ORDER.includes(name) ? ORDER.indexOf(name) : ORDER.length);

function demoProcesses(): DemoProcess[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => pid !== process.pid)
    .flatMap((pid) => {
      const name = demoProcessName(pid);
      return name ? [{ pid, name }] : [];
    })
    .sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));
}

/** Seconds since a process started (field 22 of /proc/<pid>/stat, in ticks since boot). */
function uptimeSeconds(pid: number): number {
  const stat = read(`/proc/${pid}/stat`);
  const started = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) / TICKS_PER_SECOND;
  const sinceBoot = Number(read('/proc/uptime').split(' ')[0]);
  return round(sinceBoot - started, 0);
}

/**
 * KAFKA_CLIENT of the services and relays, read from their environment; "kafkajs (unset)" for a
 * process without it (its default), more than one when a process was restarted with another.
 */
function kafkaClientOf(found: DemoProcess[]): string {
  const clients = found
    .filter(({ name }) => /^(orders|inventory|billing)(-2)?$|^relay-/.test(name))
    .map(
      ({ pid }) =>
        /(?:^|\0)KAFKA_CLIENT=([^\0]*)/.exec(read(`/proc/${pid}/environ`))?.[1] ?? 'kafkajs (unset)',
    );
  return [...new Set(clients)].sort().join(', ');
}

const processes = demoProcesses();
if (processes.length === 0) {
  console.error(`no demo of ${root} is running: start one with ./dev demo`);
  process.exit(1);
}
const demo = processes.find((found) => found.name === 'the demo process');
const before = { loadavg: loadavg(), ticks: processes.map((found) => procTicks(found.pid)) };
await sleep(seconds * 1000);
const after = { loadavg: loadavg(), ticks: processes.map((found) => procTicks(found.pid)) };

const measured = processes.flatMap((found, index) => {
  const used = (after.ticks[index] ?? Number.NaN) - (before.ticks[index] ?? Number.NaN);
  if (!Number.isFinite(used)) return []; // exited during the window
  const cpuMs = (used * 1000) / TICKS_PER_SECOND;
  return [{ name: found.name, cpuMs, percentOfCore: round((cpuMs / 1000 / seconds) * 100, 2) }];
});
const totalCpuMs = measured.reduce((sum, found) => sum + found.cpuMs, 0);
const report: IdleCpu = {
  date: new Date().toISOString(),
  machine: machineInfo(),
  node: process.version,
  // The last commit that changed what the demo runs (a commit of the docs or of this script after
  // it does not change the figures), with a mark when the checkout differs from it.
  revision:
    git(['log', '-1', '--format=%h', '--', ...DEMO_CODE]) +
    (git(['status', '--porcelain', '--', ...DEMO_CODE]) ? '+changes' : ''),
  seconds,
  kafkaClient: kafkaClientOf(processes),
  demoUptimeSeconds: demo ? uptimeSeconds(demo.pid) - seconds : undefined,
  loadavg: { before: before.loadavg, after: after.loadavg },
  processes: measured,
  total: { cpuMs: totalCpuMs, percentOfCore: round((totalCpuMs / 1000 / seconds) * 100, 2) },
};

const markdown = [
  '# Idle CPU of the demo',
  '',
  `Run ${report.date} at \`${report.revision}\`; ${JSON.stringify(report.machine)}; Node ${report.node}; ` +
    `a ${seconds} s window${report.demoUptimeSeconds === undefined ? '' : `, ${report.demoUptimeSeconds} s after the demo started`}; ` +
    `load average ${report.loadavg.before.join(' ')} before, ${report.loadavg.after.join(' ')} after; ` +
    `services and relays on ${report.kafkaClient} (KAFKA_CLIENT). PostgreSQL not counted.`,
  '',
  ...markdownTableLines(
    ['process', 'CPU ms', '% of a core'],
    [...measured, { name: 'all of these', ...report.total }].map((found) => [
      found.name,
      found.cpuMs.toFixed(0),
      found.percentOfCore.toFixed(2),
    ]),
  ),
  '',
].join('\n');
if (args.out) writeResults(args.out, report, markdown, 'as the running demo has it: sampled to Zipkin');
else process.stdout.write(markdown);
