import { outboxStats } from '@outbox/outbox';
import { errorMessage, fetchWithTimeout, type Service } from '../services.ts';
import type { OutboxRowView, OutboxView, RelayHealth } from '../shared/apiTypes.ts';

const NEWEST_ROWS = 8;
const FAILED_ROWS = 20;

const rowColumns = `
  id, event_type, aggregate_id, status, attempts, last_error, lease_owner, lease_expires_at,
  next_attempt_at, created_at, published_at`;

/** The newest events, whatever their state: what the relay is doing right now. */
const newestSql = `select ${rowColumns} from outbox order by seq desc limit $1::int`;

/** Dead-lettered events, oldest first (the order a redrive of all would publish them in). */
const failedSql = `select ${rowColumns} from outbox where status = 'failed' order by seq limit $1::int`;

type Row = {
  id: string;
  event_type: string;
  aggregate_id: string;
  status: OutboxRowView['status'];
  attempts: number;
  last_error: string | null;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  next_attempt_at: Date;
  created_at: Date;
  published_at: Date | null;
};

function toRowView(row: Row): OutboxRowView {
  return {
    id: row.id,
    eventType: row.event_type,
    aggregateId: row.aggregate_id,
    status: row.status,
    attempts: row.attempts,
    lastError: row.last_error,
    leaseOwner: row.lease_owner,
    leaseExpiresAt: row.lease_expires_at?.toISOString() ?? null,
    nextAttemptAt: row.next_attempt_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    publishedAt: row.published_at?.toISOString() ?? null,
  };
}

/** What a relay's /healthz answers (apps/relay: engine/relayHealth.ts in polling mode, cdc/cdcHealth.ts in debezium). */
type RelayHealthBody = {
  status?: RelayHealth['status'];
  lastError?: string;
  mode?: RelayHealth['mode'];
  connector?: string;
  connectorState?: string;
  taskStates?: string[];
  slot?: NonNullable<RelayHealth['cdc']>['slot'];
  slotError?: string;
};

/** The relay's health, its mode and, in debezium mode, its connector and slot. */
export async function relayHealth(relayUrl: string): Promise<RelayHealth> {
  try {
    const res = await fetchWithTimeout(`${relayUrl}/healthz`);
    const body = (await res.json()) as RelayHealthBody;
    const detail = body.lastError ?? body.slotError;
    return {
      status: body.status ?? 'down',
      ...(detail ? { detail } : {}),
      ...(body.mode ? { mode: body.mode } : {}),
      ...(body.mode === 'debezium' ? { cdc: cdcOf(body) } : {}),
    };
  } catch (err) {
    return { status: 'unreachable', detail: errorMessage(err) };
  }
}

function cdcOf(body: RelayHealthBody): NonNullable<RelayHealth['cdc']> {
  const slot = body.slot;
  return {
    connector: body.connector ?? '',
    ...(body.connectorState ? { connectorState: body.connectorState } : {}),
    ...(body.taskStates ? { taskStates: body.taskStates } : {}),
    ...(slot
      ? {
          slot: {
            name: slot.name,
            active: slot.active,
            retainedWalBytes: slot.retainedWalBytes,
            unconfirmedWalBytes: slot.unconfirmedWalBytes,
          },
        }
      : {}),
    ...(body.slotError ? { slotError: body.slotError } : {}),
  };
}

/** One service database's outbox as the relay sees it, and the relay's own health. */
export async function outboxView(service: Service): Promise<OutboxView> {
  const relay = await relayHealth(service.relayUrl);
  try {
    const [stats, newest, failed] = await Promise.all([
      outboxStats(service.pool),
      service.pool.query<Row>(newestSql, [NEWEST_ROWS]),
      service.pool.query<Row>(failedSql, [FAILED_ROWS]),
    ]);
    return {
      service: service.name,
      relay,
      stats: {
        pending: stats.byStatus.pending,
        inFlight: stats.byStatus.in_flight,
        failed: stats.byStatus.failed,
        oldestUnpublishedSeconds: stats.oldestUnpublishedSeconds,
      },
      newest: newest.rows.map(toRowView),
      failed: failed.rows.map(toRowView),
    };
  } catch (err) {
    return { service: service.name, relay, newest: [], failed: [], error: errorMessage(err) };
  }
}
