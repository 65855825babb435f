import { errorMessage, fetchWithTimeout, type Service } from '../services.ts';
import type { ConsumerView } from '../shared/apiTypes.ts';
import { parseSamples } from './prometheusText.ts';

/** The consumer metrics every consumer process exposes (packages/inbox/src/consumerMetrics.ts). */
const METRICS = new Set(['consumer_events_total', 'consumer_dead_lettered_total', 'consumer_lag_messages']);

type SinceStart = NonNullable<ConsumerView['sinceStart']>;

async function metricsOf(service: Service): Promise<Map<string, SinceStart & { lag: number }>> {
  const res = await fetchWithTimeout(`${service.url}/metrics`);
  if (!res.ok) throw new Error(`GET ${service.url}/metrics answered ${res.status}`);
  const byConsumer = new Map<string, SinceStart & { lag: number }>();
  for (const sample of parseSamples(await res.text(), METRICS)) {
    const consumer = sample.labels.consumer;
    if (!consumer) continue;
    const entry = byConsumer.get(consumer) ?? {
      applied: 0,
      duplicates: 0,
      ignored: 0,
      deadLettered: 0,
      lag: 0,
    };
    if (sample.name === 'consumer_events_total') {
      const result = sample.labels.result;
      if (result === 'applied') entry.applied += sample.value;
      else if (result === 'duplicate') entry.duplicates += sample.value;
      else if (result === 'ignored') entry.ignored += sample.value;
    } else if (sample.name === 'consumer_dead_lettered_total') {
      entry.deadLettered += sample.value;
    } else {
      entry.lag += sample.value;
    }
    byConsumer.set(consumer, entry);
  }
  return byConsumer;
}

/** processed_events rows by consumer: the inbox, the durable record of what was applied. */
async function processedCounts(service: Service): Promise<Map<string, number>> {
  const { rows } = await service.pool.query<{ consumer: string; count: number }>(
    'select consumer, count(*)::int as count from processed_events group by consumer',
  );
  return new Map(rows.map((row) => [row.consumer, row.count]));
}

/**
 * The consumers of one service (orders consumes the saga's replies, inventory and billing the
 * orders): applied events from the inbox table, duplicates and dead letters from /metrics.
 * Either source may be away (the process killed, the database down); the view shows what it got.
 */
export async function consumerViews(service: Service): Promise<ConsumerView[]> {
  const [metrics, processed] = await Promise.allSettled([metricsOf(service), processedCounts(service)]);
  const names = new Set([
    ...(metrics.status === 'fulfilled' ? metrics.value.keys() : []),
    ...(processed.status === 'fulfilled' ? processed.value.keys() : []),
  ]);
  const errors = [metrics, processed].flatMap((result) =>
    result.status === 'rejected' ? [errorMessage(result.reason)] : [],
  );
  if (names.size === 0) {
    return [
      {
        consumer: service.name,
        service: service.name,
        processed: null,
        sinceStart: null,
        lag: null,
        error: errors.length ? errors.join('; ') : 'has consumed nothing yet',
      },
    ];
  }
  return [...names].sort().map((consumer) => {
    const fromMetrics = metrics.status === 'fulfilled' ? metrics.value.get(consumer) : undefined;
    const { lag, ...sinceStart } = fromMetrics ?? { lag: null };
    return {
      consumer,
      service: service.name,
      processed: processed.status === 'fulfilled' ? (processed.value.get(consumer) ?? 0) : null,
      sinceStart: fromMetrics ? (sinceStart as SinceStart) : null,
      lag,
      ...(errors.length ? { error: errors.join('; ') } : {}),
    };
  });
}
