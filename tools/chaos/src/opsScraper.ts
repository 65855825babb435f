import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceProcess } from '@outbox/devstack/service-process';
import type { ChaosStack, ProcessName } from './stack.ts';

export type OpsScrapeResult = {
  /** Requests made to /metrics and /healthz over the run. */
  scrapes: number;
  /** One line per failure to get an answer from a process that should have been up, or a crash. */
  failures: string[];
  /**
   * The Kafka client each process says on /healthz it runs (`kafkaClient`, orders' under `replies`),
   * as last read: what the run's KAFKA_CLIENT really reached.
   */
  kafkaClients?: Record<string, string>;
};

/** The Kafka client a /healthz body names: the relay's and a consumer's at the top, orders' under `replies`. */
function kafkaClientOf(body: unknown): string | undefined {
  const health = body as { kafkaClient?: unknown; replies?: { kafkaClient?: unknown } } | null;
  const named = health?.kafkaClient ?? health?.replies?.kafkaClient;
  return typeof named === 'string' ? named : undefined;
}

export type OpsScraper = { stop(): Promise<OpsScrapeResult> };

const PATHS = ['/metrics', '/healthz'] as const;

/**
 * Scrape every process's /metrics and /healthz about once a second for the whole scenario, as
 * Prometheus and a load balancer would in production. Ops endpoints that read a database are
 * exactly what breaks when the database does (a relay once died of a /metrics scrape during a
 * PostgreSQL restart, and no scenario saw it because nothing scraped).
 *
 * A failure counts only for a process that should be up: the stack knows which ones a scenario
 * stopped or killed on purpose (`expectedDown`), and a process that dies of a signal was killed
 * (by the scenario or its own fault point). A process that exits by itself with an error, or is
 * up but gives no answer, /metrics with a non-2xx, or /healthz with anything but 200 or 503, is
 * reported.
 */
export function startOpsScraper(
  stack: ChaosStack,
  { intervalMs = 1000, timeoutMs = 10_000 }: { intervalMs?: number; timeoutMs?: number } = {},
): OpsScraper {
  const result: OpsScrapeResult = { scrapes: 0, failures: [], kafkaClients: {} };
  const watched = new WeakSet<ServiceProcess>();
  let stopping = false;

  const watchExit = (name: ProcessName, service: ServiceProcess) => {
    if (watched.has(service)) return;
    watched.add(service);
    void service.exited().then((status) => {
      if (stopping || stack.expectedDown(name) || status.signal !== null) return;
      result.failures.push(`${name} exited by itself (code ${status.code}) while it should have been up`);
    });
  };

  const scrape = async (name: ProcessName, service: ServiceProcess, path: (typeof PATHS)[number]) => {
    result.scrapes += 1;
    let problem: string | undefined;
    try {
      const res = await fetch(`${service.url}${path}`, { signal: AbortSignal.timeout(timeoutMs) });
      const body = await res.text();
      const fine = path === '/healthz' ? res.status === 200 || res.status === 503 : res.ok;
      if (!fine) problem = `answered ${res.status}`;
      else if (path === '/healthz') {
        const client = kafkaClientOf(JSON.parse(body));
        if (client && result.kafkaClients) result.kafkaClients[name] = client;
      }
    } catch (err) {
      problem = `no answer (${err instanceof Error ? err.message : String(err)})`;
    }
    if (!problem) return;
    // A process that died meanwhile is the exit watcher's to judge (a signal is a kill, not a crash).
    const exited = await Promise.race([service.exited().then(() => true), sleep(2000, false)]);
    // Only a process that is still meant to be up and still the current one counts.
    if (!exited && !stopping && !stack.expectedDown(name) && stack.process(name) === service) {
      result.failures.push(`${name} ${path}: ${problem}`);
    }
  };

  const loop = (async () => {
    while (!stopping) {
      const tick = Date.now();
      const round: Promise<void>[] = [];
      for (const name of stack.names()) {
        if (stack.expectedDown(name)) continue;
        const service = stack.process(name);
        watchExit(name, service);
        for (const path of PATHS) round.push(scrape(name, service, path));
      }
      await Promise.all(round);
      await sleep(Math.max(0, intervalMs - (Date.now() - tick)));
    }
  })();

  return {
    stop: async () => {
      stopping = true;
      await loop;
      return result;
    },
  };
}
