/** The relay processes a measurement runs, and what they report about themselves. */
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@outbox/devstack/ports';
import { type ServiceProcess, startService } from '@outbox/devstack/service-process';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import pg from 'pg';
import { cpuSince, cpuSnapshot } from '../support/cpu.ts';
import { round } from '../support/stats.ts';

export async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

export type Relay = { process: ServiceProcess; id: string };

/**
 * How a benchmark configures its relays (bench:relay's flags, or another bench's own): the batch
 * size, the topic's partitions, and more environment for every relay (KAFKA_CLIENT, say). A batch
 * size or poll interval not given is the relay's default.
 */
export type RelaySettings = { batchSize?: number; topicPartitions: number; env?: Record<string, string> };

export async function startRelays(
  db: TestDatabase,
  brokers: string[],
  prefix: string,
  count: number,
  pollMs: number | undefined,
  label: string,
  settings: RelaySettings,
): Promise<Relay[]> {
  const relays: Relay[] = [];
  // One after another: four Node processes booting at once on two cores take longer in total.
  for (let i = 0; i < count; i++) {
    const id = `${label}-${i + 1}`;
    const service = await startService(
      'relay',
      {
        DATABASE_URL: db.url,
        KAFKA_BROKERS: brokers.join(','),
        KAFKA_TOPIC_PREFIX: prefix,
        KAFKA_TOPIC_PARTITIONS: String(settings.topicPartitions),
        RELAY_ID: id,
        ...(settings.batchSize ? { RELAY_BATCH_SIZE: String(settings.batchSize) } : {}),
        ...(pollMs ? { RELAY_POLL_INTERVAL_MS: String(pollMs) } : {}),
        ...settings.env,
      },
      { port: await freePort(), label: 'bench-relay', name: id, timeoutMs: 60_000 },
    );
    relays.push({ process: service, id });
  }
  return relays;
}

export async function relayPublished(relay: Relay): Promise<number> {
  const body = (await (await fetch(`${relay.process.url}/healthz`)).json()) as { published: number };
  return body.published;
}

export const relayPids = (relays: Relay[]) =>
  relays.map((r) => r.process.pid).filter((pid): pid is number => pid !== undefined);

export async function setNotifyTrigger(client: pg.Client, enabled: boolean) {
  await client.query(
    `alter table outbox ${enabled ? 'enable' : 'disable'} trigger outbox_notify_after_insert`,
  );
}

/**
 * `count` sends, one every `intervalMs`, on a schedule fixed in advance (open loop: a slow send does
 * not delay the next one), then waits for them all. `lateTicks`: sends made more than an interval late.
 */
export async function openLoop(count: number, intervalMs: number, send: (i: number) => Promise<unknown>) {
  const inflight: Promise<unknown>[] = [];
  let lateTicks = 0;
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    const wait = start + i * intervalMs - performance.now();
    if (wait > 1) await sleep(wait);
    else if (wait < -intervalMs) lateTicks++;
    inflight.push(send(i));
  }
  await Promise.all(inflight);
  return { lateTicks, seconds: (performance.now() - start) / 1000 };
}

/**
 * Relays publishing a load: `offer` makes it, then every event of it is waited for; returns what
 * `offer` did, the CPU of `groups` over that stretch, how many times the relays ran each step
 * (claims, batches sent, marks), and each event's published_at − created_at in ms.
 */
export async function measurePublishing<T>(
  admin: pg.Client,
  relays: Relay[],
  groups: Record<string, number[]>,
  label: string,
  offer: () => Promise<T>,
) {
  const afterSeq = await lastSeq(admin);
  const cpu0 = cpuSnapshot(groups);
  const steps0 = await Promise.all(relays.map(relaySteps));
  const offered = await offer();
  if (!(await waitAllPublished(admin, afterSeq, 60_000)))
    throw new Error(`${label}: events still unpublished 60 s after the load`);
  const cpu = cpuSince(cpu0, groups);
  const steps = await Promise.all(relays.map(relaySteps));
  const stepCount = (step: keyof StepTotals) =>
    steps.reduce((sum, s, i) => sum + s[step].count - (steps0[i]?.[step].count ?? 0), 0);
  return { offered, cpu, stepCount, delaysMs: await publishDelaysMs(admin, afterSeq) };
}

/** The highest seq in the outbox now: what a measurement's rows come after. */
async function lastSeq(client: pg.Client): Promise<string> {
  const { rows } = await client.query<{ seq: string }>(
    'select coalesce(max(seq), 0)::text as seq from outbox',
  );
  return rows[0]?.seq ?? '0';
}

/** Each event's published_at − created_at in ms, for the rows after `afterSeq`. */
async function publishDelaysMs(client: pg.Client, afterSeq: string): Promise<number[]> {
  const { rows } = await client.query<{ ms: number }>(
    'select extract(epoch from published_at - created_at) * 1000 as ms from outbox where seq > $1::bigint',
    [afterSeq],
  );
  return rows.map((row) => Number(row.ms));
}

/** Wait until no row (of those with seq > afterSeq) is unpublished; false on timeout. */
export async function waitAllPublished(
  client: pg.Client,
  afterSeq: string,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { rows } = await client.query<{ n: number }>(
      `select count(*)::int as n from outbox where status <> 'published' and seq > $1::bigint`,
      [afterSeq],
    );
    if (rows[0]?.n === 0) return true;
    await sleep(50);
  }
  return false;
}

export type StepTotals = Record<'claim' | 'publish' | 'mark', { sum: number; count: number }>;

/** The relay's own per-step histogram (outbox_relay_batch_duration_seconds): sums and counts. */
export async function relaySteps(relay: { process: { url: string } }): Promise<StepTotals> {
  const text = await (await fetch(`${relay.process.url}/metrics`)).text();
  const totals: StepTotals = {
    claim: { sum: 0, count: 0 },
    publish: { sum: 0, count: 0 },
    mark: { sum: 0, count: 0 },
  };
  for (const line of text.split('\n')) {
    const match = /^outbox_relay_batch_duration_seconds_(sum|count)\{([^}]*)\}\s+(\S+)/.exec(line);
    const stepName = /step="(claim|publish|mark)"/.exec(match?.[2] ?? '')?.[1];
    if (!match || !stepName) continue;
    totals[stepName as keyof StepTotals][match[1] as 'sum' | 'count'] += Number(match[3]);
  }
  return totals;
}

/** Per batch, mean ms of each step over the window (all relays together), and batches counted. */
export function stepMeans(before: StepTotals[], after: StepTotals[]) {
  const out: Record<string, number> = {};
  for (const step of ['claim', 'publish', 'mark'] as const) {
    let sum = 0;
    let count = 0;
    after.forEach((a, i) => {
      sum += a[step].sum - (before[i]?.[step].sum ?? 0);
      count += a[step].count - (before[i]?.[step].count ?? 0);
    });
    out[`${step}Ms`] = round(count > 0 ? (sum / count) * 1000 : Number.NaN, 2);
    if (step === 'publish') out.batches = count;
  }
  return out;
}
