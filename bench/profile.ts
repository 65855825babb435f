// CPU profile of a Node process that is already running, without restarting it:
//
//   node bench/profile.ts <pid> [--seconds 15] [--out profile.cpuprofile] [--top 25]
//
// SIGUSR1 opens the process's inspector (on 127.0.0.1:9229, or --port); this script starts the V8
// sampling profiler over the inspector's WebSocket, waits, stops it, writes the .cpuprofile (Chrome
// DevTools and speedscope open it) and prints where the busy time went, by package: self time and
// inclusive time (the package anywhere on the stack). docs/performance.md shows how we used it.
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { busyStacks, type CpuProfile } from './support/cpuProfile.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: 'string', default: '15' },
    out: { type: 'string', default: 'profile.cpuprofile' },
    port: { type: 'string', default: '9229' },
    top: { type: 'string', default: '25' },
  },
});
const pid = Number(positionals[0]);
if (!Number.isInteger(pid) || pid <= 0) {
  console.error('usage: node bench/profile.ts <pid> [--seconds 15] [--out file] [--port 9229] [--top 25]');
  process.exit(2);
}

/** What a frame belongs to: an npm package, a folder of this repository, or null (Node, V8). */
function ownerOf(url: string): string | null {
  const npm = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (npm) return npm[1] ?? null;
  const ours = url.match(/\/((?:apps|packages)\/[^/]+)\/src\//);
  return ours ? (ours[1] ?? null) : null;
}

async function takeProfile(): Promise<CpuProfile> {
  process.kill(pid, 'SIGUSR1');
  let targets: { webSocketDebuggerUrl: string }[] = [];
  for (let attempt = 0; attempt < 20 && targets.length === 0; attempt++) {
    await sleep(250);
    targets = await fetch(`http://127.0.0.1:${values.port}/json/list`)
      .then((response) => response.json() as Promise<typeof targets>)
      .catch(() => []);
  }
  const target = targets[0];
  if (!target) throw new Error(`no inspector answered on port ${values.port} after SIGUSR1 to ${pid}`);
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  const waiting = new Map<number, (result: unknown) => void>();
  socket.onmessage = (message) => {
    const reply = JSON.parse(String(message.data)) as { id?: number; result?: unknown };
    if (reply.id !== undefined) waiting.get(reply.id)?.(reply.result);
  };
  let nextId = 0;
  const call = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve) => {
      const id = ++nextId;
      waiting.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  await call('Profiler.enable');
  await call('Profiler.setSamplingInterval', { interval: 500 });
  await call('Profiler.start');
  await sleep(Number(values.seconds) * 1000);
  const { profile } = (await call('Profiler.stop')) as { profile: CpuProfile };
  socket.close();
  return profile;
}

function summarize(profile: CpuProfile): void {
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let busy = 0;
  for (const { stack, micros } of busyStacks(profile)) {
    const [frame] = stack;
    if (!frame) continue;
    busy += micros;
    const selfKey = ownerOf(frame.url) ?? (frame.url ? 'node' : `(${frame.functionName || 'native'})`);
    self.set(selfKey, (self.get(selfKey) ?? 0) + micros);
    const onStack = new Set(stack.flatMap((caller) => ownerOf(caller.url) ?? []));
    for (const owner of onStack) inclusive.set(owner, (inclusive.get(owner) ?? 0) + micros);
  }
  const top = Number(values.top);
  const print = (title: string, totals: Map<string, number>) => {
    console.log(`\n${title}`);
    for (const [key, micros] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top))
      console.log(
        `${(micros / 1000).toFixed(0).padStart(8)} ms ${((100 * micros) / busy).toFixed(1).padStart(5)}%  ${key}`,
      );
  };
  console.log(`busy ${(busy / 1000).toFixed(0)} ms of ${values.seconds} s`);
  print('self time (where the CPU was)', self);
  print('inclusive time (package anywhere on the stack)', inclusive);
}

const profile = await takeProfile();
writeFileSync(values.out, JSON.stringify(profile));
console.log(`wrote ${values.out}`);
summarize(profile);
