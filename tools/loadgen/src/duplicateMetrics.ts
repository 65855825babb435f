import { getText } from './httpClient.ts';

export type MetricsUrls = { inventory?: string; billing?: string; orders?: string };

/** Duplicates skipped per consumer, and the services whose /metrics could not be read. */
type DuplicateCounts = { byConsumer: Record<string, number>; unreadable: string[] };

/**
 * Read the duplicates each consumer has skipped so far from the services' Prometheus /metrics.
 * The counters run since each process started, so a run's own duplicates are the difference
 * between a scrape before the run and one after it.
 */
export async function scrapeDuplicates(urls: MetricsUrls, timeoutMs = 5_000): Promise<DuplicateCounts> {
  const counts: DuplicateCounts = { byConsumer: {}, unreadable: [] };
  for (const [service, base] of Object.entries(urls)) {
    if (!base) continue;
    try {
      const response = await getText(new URL('/metrics', base), timeoutMs);
      if (response.status !== 200) throw new Error(`status ${response.status}`);
      for (const [consumer, value] of Object.entries(duplicatesIn(response.body))) {
        counts.byConsumer[consumer] = (counts.byConsumer[consumer] ?? 0) + value;
      }
    } catch (err) {
      counts.unreadable.push(`${service} (${base}/metrics: ${err instanceof Error ? err.message : err})`);
    }
  }
  return counts;
}

/**
 * A sample of the counter every consumer counts handled events in (packages/inbox/src/consumerMetrics.ts):
 * `consumer_events_total{consumer, event_type, result}`; result="duplicate" means the event was found
 * in processed_events and skipped. The label set (a quoted value may contain `}`), then the value;
 * what may follow the value (a timestamp, an OpenMetrics exemplar `# {trace_id="…"} 1`) is not needed.
 */
const SAMPLE = /^consumer_events_total\{((?:[^"}]|"(?:[^"\\]|\\.)*")*)\}\s+(\S+)/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/**
 * Sum of consumer_events_total{result="duplicate"} per consumer, in the Prometheus text format or
 * OpenMetrics (the sample lines read the same in both).
 */
export function duplicatesIn(exposition: string): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const line of exposition.split('\n')) {
    const sample = SAMPLE.exec(line);
    if (!sample) continue;
    const labels = Object.fromEntries([...(sample[1] ?? '').matchAll(LABEL)].map((m) => [m[1], m[2]]));
    const value = Number(sample[2]);
    if (labels.result !== 'duplicate' || labels.consumer === undefined || !Number.isFinite(value)) continue;
    sums[labels.consumer] = (sums[labels.consumer] ?? 0) + value;
  }
  return sums;
}

/**
 * after − before, per consumer. A counter that went down means its process restarted during the
 * run and counted from 0 again: then only the count since the restart is known, a lower bound.
 */
export function difference(after: Record<string, number>, before: Record<string, number> = {}) {
  return Object.fromEntries(
    Object.entries(after).map(([consumer, value]) => {
      const earlier = before[consumer] ?? 0;
      return [consumer, value >= earlier ? value - earlier : value];
    }),
  );
}
