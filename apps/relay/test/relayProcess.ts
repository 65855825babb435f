import { randomBytes } from 'node:crypto';
import { freePort } from '@outbox/devstack/ports';
import { type ServiceProcess, startService } from '@outbox/devstack/service-process';
import pg from 'pg';

/** Helpers shared by the relay's process-level tests (not a test file itself). */

export type RelayHealthBody = {
  status: 'ok' | 'degraded';
  relayId: string;
  lastError?: string;
  published: number;
};

/** A fresh topic prefix, so no two test files (or runs) share a topic. */
export function topicPrefix(label: string): string {
  return `${label}-${randomBytes(3).toString('hex')}.`;
}

/** Start `node apps/relay/src/main.ts` as a real process and wait for its /healthz. */
export async function startRelay(
  label: string,
  env: { DATABASE_URL: string; KAFKA_BROKERS: string[]; KAFKA_TOPIC_PREFIX: string } & Record<
    string,
    string | string[]
  >,
): Promise<ServiceProcess> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    flat[name] = Array.isArray(value) ? value.join(',') : value;
  return startService('relay', { KAFKA_TOPIC_PARTITIONS: '6', ...flat }, { port: await freePort(), label });
}

export async function relayHealth(relay: ServiceProcess): Promise<RelayHealthBody> {
  return (await (await fetch(`${relay.url}/healthz`)).json()) as RelayHealthBody;
}

/** Sum of a metric's samples over all label sets on the relay's /metrics (0 when absent). */
export async function metricValue(relay: ServiceProcess, name: string): Promise<number> {
  const text = await (await fetch(`${relay.url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (match?.[1] === name) sum += Number(match[3]);
  }
  return sum;
}

/** Count rows by status; one short-lived connection per call. */
export async function statusCounts(url: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ status: string; count: number }>(
      'select status, count(*)::int as count from outbox group by status',
    );
    return Object.fromEntries(rows.map((row) => [row.status, row.count]));
  } finally {
    await client.end();
  }
}

/**
 * For each key, the event ids in the order they appear on the topic (first occurrence only),
 * and how many ids occur more than once.
 */
export function firstOccurrencesByKey(messages: { key: string | undefined; eventId: string | undefined }[]): {
  byKey: Map<string, string[]>;
  counts: Map<string, number>;
  duplicateIds: number;
} {
  const counts = new Map<string, number>();
  const byKey = new Map<string, string[]>();
  for (const { key, eventId } of messages) {
    if (eventId === undefined || key === undefined) throw new Error('message without key or ce_id');
    const seen = counts.get(eventId) ?? 0;
    counts.set(eventId, seen + 1);
    if (seen > 0) continue;
    let list = byKey.get(key);
    if (!list) {
      list = [];
      byKey.set(key, list);
    }
    list.push(eventId);
  }
  const duplicateIds = [...counts.values()].filter((count) => count > 1).length;
  return { byKey, counts, duplicateIds };
}

/** The outbox's own order: for each aggregate id, its event ids by seq. */
export function idsByAggregate(
  rows: { id: string; aggregate_id: string; seq: number }[],
): Map<string, string[]> {
  const byAggregate = new Map<string, string[]>();
  for (const row of [...rows].sort((a, b) => a.seq - b.seq)) {
    let list = byAggregate.get(row.aggregate_id);
    if (!list) {
      list = [];
      byAggregate.set(row.aggregate_id, list);
    }
    list.push(row.id);
  }
  return byAggregate;
}
