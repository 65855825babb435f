import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { localDir, repoRoot } from '../paths.ts';
import { freePortBlock } from '../ports.ts';

/** `./dev demo` as a real process, on a block of free ports, for tests and benchmarks that drive it. */
export type RunningDemo = {
  base: number;
  ordersUrl: string;
  consoleUrl: string;
  kafkaBrokers: string[];
  /** Everything it printed so far. */
  output(): string;
  /** Ctrl-C, as a person stops it: it stops everything it started; SIGKILL if it has not after 120 s. */
  stop(): Promise<void>;
};

/**
 * Starts `node scripts/demo.ts <args>` with `env` on top of this process's environment, Prometheus
 * and tracing off (lighter; neither is what these runs look at), and waits for its banner.
 */
export async function startDemo(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 300_000,
): Promise<RunningDemo> {
  // Eleven: PostgreSQL, the six processes, the console, Kafka and its controller, Zipkin.
  const base = await freePortBlock(11);
  const demo: ChildProcess = spawn(process.execPath, ['scripts/demo.ts', ...args], {
    cwd: repoRoot,
    env: {
      ...process.env,
      DEMO_BASE_PORT: String(base),
      CONSOLE_PORT: String(base + 7),
      KAFKA_PORT: String(base + 8),
      ZIPKIN_PORT: String(base + 10),
      DEMO_PROMETHEUS: 'off',
      DEMO_TRACING: 'off',
      NO_COLOR: '1',
      FORCE_COLOR: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const stream of [demo.stdout, demo.stderr]) {
    stream?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
  }
  const exited = new Promise<void>((resolve) => demo.once('exit', () => resolve()));
  const stop = async () => {
    if (demo.exitCode === null && demo.signalCode === null) {
      demo.kill('SIGINT');
      const stopped = await Promise.race([exited.then(() => true), sleep(120_000).then(() => false)]);
      if (!stopped) demo.kill('SIGKILL');
    }
    rmSync(join(localDir, 'kafka', `demo-${base + 8}`), { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  while (!output.includes('Ctrl-C stops everything')) {
    if (demo.exitCode !== null) throw new Error(`the demo exited during start-up:\n${output}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the demo did not start within ${timeoutMs / 1000} s:\n${output}`);
    }
    await sleep(250);
  }
  return {
    base,
    ordersUrl: `http://127.0.0.1:${base + 1}`,
    consoleUrl: `http://127.0.0.1:${base + 7}`,
    kafkaBrokers: [`127.0.0.1:${base + 8}`],
    output: () => output,
    stop,
  };
}
