/**
 * What a process spent its main thread on, from the profile `node --cpu-prof` writes at exit:
 * busy time split by the library on the stack (Prisma, node-postgres, kafkajs, HTTP, ...), and how
 * much of it was socket writes. Used by bench:where-time-goes --cpu-prof for the window it measures.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The parts of V8's .cpuprofile format this reads (Chrome DevTools' Profile object). */
export type CpuProfile = {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  /** Microseconds on the monotonic clock: `process.hrtime.bigint() / 1000n` in any process. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
};

/**
 * The parts, in priority order: a sample goes to the first part any frame of its stack belongs
 * to, so the node-postgres code Prisma drives counts as Prisma, the socket write under an HTTP
 * response as HTTP.
 */
const PARTS: { part: string; matches: (url: string) => boolean }[] = [
  {
    part: 'Prisma (node-postgres below it included)',
    matches: (url) => url.includes('/node_modules/@prisma/'),
  },
  { part: 'node-postgres', matches: (url) => /\/node_modules\/pg(-pool|-protocol)?\//.test(url) },
  { part: 'kafkajs', matches: (url) => url.includes('/node_modules/kafkajs/') },
  { part: 'OpenTelemetry', matches: (url) => url.includes('/node_modules/@opentelemetry/') },
  {
    part: 'HTTP (express, node:http)',
    matches: (url) =>
      /\/node_modules\/(express|router|body-parser)\//.test(url) || url.startsWith('node:_http'),
  },
  { part: 'logging (pino)', matches: (url) => /\/node_modules\/(pino|sonic-boom)\//.test(url) },
  { part: 'metrics (prom-client)', matches: (url) => url.includes('/node_modules/prom-client/') },
];
const GARBAGE_COLLECTOR = '(garbage collector)';
const OTHER = 'other (our code, zod, Node internals, microtasks)';
/** V8's pseudo-frames that are not work on the main thread. */
const NOT_BUSY = new Set(['(idle)', '(root)']);
/** The native functions node:net's socket writes end in. */
const SOCKET_WRITES = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String']);

export type ProfileShares = {
  /** Sampled main-thread time that was not idle, in the window. */
  busyMs: number;
  /** Busy time by part, largest first. */
  parts: { part: string; ms: number }[];
  /** Self time in socket writes (database statements, Kafka requests, HTTP responses), whichever part called them. */
  socketWritesMs: number;
};

/** A stack the profiler sampled (leaf first) and how long it ran in all. */
export type SampledStack = { stack: CpuProfile['nodes'][number]['callFrame'][]; micros: number };

/**
 * The busy samples in [fromUs, toUs] (the whole profile when omitted), one entry per sampled stack.
 * A sample's delta is the time since the previous sample: the time the sampled stack ran.
 */
export function busyStacks(profile: CpuProfile, window?: { fromUs: number; toUs: number }): SampledStack[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const timeById = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (window && (at < window.fromUs || at > window.toUs)) return;
    timeById.set(id, (timeById.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const stacks: SampledStack[] = [];
  for (const [leafId, micros] of timeById) {
    const stack: SampledStack['stack'] = [];
    for (let id: number | undefined = leafId; id !== undefined; id = parentOf.get(id)) {
      const frame = byId.get(id)?.callFrame;
      if (frame) stack.push(frame);
    }
    if (stack[0] && !NOT_BUSY.has(stack[0].functionName)) stacks.push({ stack, micros });
  }
  return stacks;
}

/** Busy time by part over the samples taken in [fromUs, toUs] (the whole profile when omitted). */
export function profileShares(profile: CpuProfile, window?: { fromUs: number; toUs: number }): ProfileShares {
  const byPart = new Map<string, number>();
  let busyUs = 0;
  let socketWritesUs = 0;
  for (const { stack, micros } of busyStacks(profile, window)) {
    const leaf = stack[0];
    busyUs += micros;
    if (leaf && SOCKET_WRITES.has(leaf.functionName) && leaf.url === '') socketWritesUs += micros;
    const part =
      leaf?.functionName === GARBAGE_COLLECTOR
        ? GARBAGE_COLLECTOR
        : (PARTS.find(({ matches }) => stack.some((frame) => matches(frame.url)))?.part ?? OTHER);
    byPart.set(part, (byPart.get(part) ?? 0) + micros);
  }
  return {
    busyMs: busyUs / 1000,
    parts: [...byPart].map(([part, us]) => ({ part, ms: us / 1000 })).sort((a, b) => b.ms - a.ms),
    socketWritesMs: socketWritesUs / 1000,
  };
}

/**
 * The profiles `--cpu-prof-dir=dir` holds, by the pid in their names
 * (`CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile`).
 */
export function readProfiles(dir: string): Map<number, CpuProfile> {
  const profiles = new Map<number, CpuProfile>();
  for (const name of readdirSync(dir)) {
    const pid = /^CPU\.\d+\.\d+\.(\d+)\.\d+\.\d+\.cpuprofile$/.exec(name)?.[1];
    if (pid) profiles.set(Number(pid), JSON.parse(readFileSync(join(dir, name), 'utf8')) as CpuProfile);
  }
  return profiles;
}
