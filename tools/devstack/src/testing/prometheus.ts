import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../ports.ts';
import { prometheusConfig } from '../prometheusConfig.ts';
import { eventually } from './stack.ts';

export type QueryResponse = {
  status: string;
  error?: string;
  warnings?: string[];
  data?: { resultType: string; result: unknown[] };
};

type Exemplar = { labels: Record<string, string>; value: string; timestamp: number };
export type ExemplarsResponse = {
  status: string;
  error?: string;
  data?: { seriesLabels: Record<string, string>; exemplars: Exemplar[] }[];
};

export type TestPrometheus = {
  url: string;
  pid: number | undefined;
  /** An instant query through the HTTP API, as Grafana and the rule evaluator run them. */
  query(expr: string): Promise<QueryResponse>;
  /** The exemplars stored for the series of `expr` over the last `minutes` (Grafana's exemplar query). */
  queryExemplars(expr: string, minutes?: number): Promise<ExemplarsResponse>;
  stop(): Promise<void>;
};

/**
 * A real Prometheus (Debian's /usr/bin/prometheus) scraping the given jobs every second (or every
 * `intervalSeconds`: the demo's 5 s for a benchmark of the demo as shipped) and evaluating the given
 * rule files, with its data in a temporary folder that `stop` removes.
 */
export async function startPrometheus(
  jobs: Record<string, number>,
  ruleFiles: string[],
  { intervalSeconds = 1 }: { intervalSeconds?: number } = {},
): Promise<TestPrometheus> {
  const workDir = mkdtempSync(path.join(tmpdir(), 'outbox-prometheus-'));
  const configFile = path.join(workDir, 'prometheus.yml');
  writeFileSync(configFile, prometheusConfig(jobs, ruleFiles, intervalSeconds));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    '/usr/bin/prometheus',
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${path.join(workDir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // Keep the trace ids the latency histograms carry (OpenMetrics exemplars), as docker-compose does.
      '--enable-feature=exemplar-storage',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  const exited = new Promise((done) => child.once('close', done));
  child.stdout?.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(workDir, { recursive: true, force: true });
  };
  try {
    await eventually('Prometheus ready', async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}:\n${log}`);
      const ok = await fetch(`${url}/-/ready`).then(
        (res) => res.ok,
        () => false,
      );
      return ok || undefined;
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    pid: child.pid,
    query: (expr) => instantQuery(url, expr),
    queryExemplars: (expr, minutes = 10) => exemplarQuery(url, expr, minutes),
    stop,
  };
}

async function instantQuery(url: string, expr: string): Promise<QueryResponse> {
  const res = await fetch(`${url}/api/v1/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ query: expr }),
  });
  return (await res.json()) as QueryResponse;
}

async function exemplarQuery(url: string, expr: string, minutes: number): Promise<ExemplarsResponse> {
  const end = Date.now() / 1000;
  const res = await fetch(`${url}/api/v1/query_exemplars`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ query: expr, start: String(end - minutes * 60), end: String(end) }),
  });
  return (await res.json()) as ExemplarsResponse;
}
