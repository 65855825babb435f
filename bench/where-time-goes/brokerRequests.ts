// The broker's side of a load window: every request it completed, by API and by client, counted
// from its request log (kafka.request.logger at DEBUG writes one JSON line per completed request).
// At low rates the Kafka JVM is the second largest CPU user, and what it costs follows the
// requests, not the messages (docs/performance.md, "The Kafka broker: requests, not messages").
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kafkaLog4jConfig } from '@outbox/devstack/jars';
import { markdownTableLines } from '@outbox/devstack/table';

/**
 * JVM options that turn the request log on: the broker's own log4j2 configuration with
 * kafka.request.logger at DEBUG (a later -Dlog4j2.configurationFile wins over the broker's). The
 * logging costs the broker CPU of its own, so a run with it compares with runs with it only.
 */
export function requestLogJvmOptions(): string[] {
  const base = readFileSync(kafkaLog4jConfig, 'utf8');
  const withRequests = base.replace(/^logger\.request\.level = \w+$/m, 'logger.request.level = debug');
  if (withRequests === base) throw new Error(`no logger.request.level line in ${kafkaLog4jConfig}`);
  const file = join(mkdtempSync(join(tmpdir(), 'broker-requests-')), 'log4j2.properties');
  writeFileSync(file, withRequests);
  return [`-Dlog4j2.configurationFile=${file}`];
}

/** Where the broker's log ends now: the window's requests are the lines written after it. */
export const logOffset = (logFile: string): number => statSync(logFile).size;

export type BrokerRequests = {
  /** Requests per accepted order, by API (PRODUCE, FETCH, OFFSET_COMMIT, ...). */
  perOrder: Record<string, number>;
  /** Requests per accepted order by API and client id (`PRODUCE relay-relay-orders`). */
  perOrderByClient: Record<string, number>;
  /** Partitions per produce request: how many partitions each produce request carried, counted. */
  producePartitions: Record<string, number>;
  /** Mean time in the broker's request handler (localTimeMs), by API, in ms. */
  meanLocalMs: Record<string, number>;
};

type Completed = {
  requestHeader: { requestApiKeyName: string; clientId: string };
  request?: { topicData?: { partitionData?: unknown[] }[] };
  localTimeMs?: number;
};

/** Count the requests the broker completed between two offsets of its log. */
export function brokerRequests(logFile: string, from: number, to: number, accepted: number): BrokerRequests {
  const text = readRange(logFile, from, to);
  const byApi = new Map<string, number>();
  const byClient = new Map<string, number>();
  const localMs = new Map<string, number>();
  const partitions = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, n = 1) => map.set(key, (map.get(key) ?? 0) + n);
  for (const line of text.split('\n')) {
    const at = line.indexOf('Completed request:');
    if (at < 0) continue;
    const end = line.lastIndexOf('} (');
    const request = JSON.parse(line.slice(at + 'Completed request:'.length, end + 1)) as Completed;
    const api = request.requestHeader.requestApiKeyName;
    add(byApi, api);
    add(byClient, `${api} ${request.requestHeader.clientId}`);
    add(localMs, api, request.localTimeMs ?? 0);
    if (api === 'PRODUCE') {
      const count = (request.request?.topicData ?? []).reduce(
        (n, t) => n + (t.partitionData?.length ?? 0),
        0,
      );
      add(partitions, String(count));
    }
  }
  const perOrder = (map: Map<string, number>) =>
    Object.fromEntries(
      [...map.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([key, n]) => [key, Number((n / Math.max(1, accepted)).toFixed(3))]),
    );
  return {
    perOrder: perOrder(byApi),
    perOrderByClient: perOrder(byClient),
    producePartitions: Object.fromEntries(partitions),
    meanLocalMs: Object.fromEntries(
      [...localMs.entries()].map(([api, ms]) => [api, Number((ms / (byApi.get(api) ?? 1)).toFixed(3))]),
    ),
  };
}

function readRange(file: string, from: number, to: number): string {
  const buffer = Buffer.alloc(Math.max(0, to - from));
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, from);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8');
}

/** The report's part: requests per order by API, then by client, with the produce requests' sizes. */
export function brokerRequestsLines(requests: BrokerRequests): string[] {
  const produces = Object.entries(requests.producePartitions).sort((a, b) => Number(a[0]) - Number(b[0]));
  return [
    'Requests the broker completed in the window (its request log), per accepted order, by API, with the mean time in its request handler:',
    '',
    ...markdownTableLines(
      ['API', 'requests per order', 'mean handler ms'],
      Object.entries(requests.perOrder).map(([api, n]) => [
        api,
        n.toFixed(3),
        String(requests.meanLocalMs[api] ?? '—'),
      ]),
    ),
    '',
    ...markdownTableLines(
      ['API and client', 'requests per order'],
      Object.entries(requests.perOrderByClient).map(([key, n]) => [key, n.toFixed(3)]),
    ),
    '',
    `Partitions per produce request (how many produce requests carried that many): ${produces.map(([k, n]) => `${k}: ${n}`).join(', ')}.`,
    '',
  ];
}
