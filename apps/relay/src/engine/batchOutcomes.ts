import type { ClaimedRow, OutboxStore } from '@outbox/outbox';
import { backoffDelayMs } from '@outbox/runtime/backoff';
import { toError } from '@outbox/runtime/errors';
import { exemplarOf } from '@outbox/runtime/exemplars';
import type { StandbyWait } from '@outbox/runtime/standby-wait';
import type { Logger } from 'pino';
import type { RelayMetrics } from './metrics.ts';
import type { PublishFailureKind } from './publishErrors.ts';
import type { RelayHealthTracker } from './relayHealth.ts';

/**
 * What the relay writes back once the broker has answered for a batch: published rows marked,
 * refused ones retried or dead-lettered, and the lease kept while the broker takes its time.
 * Every write is fenced by the relay's id (see outboxStore.ts) and counts only what it changed.
 */
export type OutcomeDeps = {
  /** The outbox's rows, read and written through the store (packages/outbox's outboxStore.ts). */
  store: OutboxStore;
  /** The relay's id: the lease owner every write is fenced by. */
  owner: string;
  leaseMs: number;
  maxAttempts: number;
  metrics: RelayMetrics;
  logger: Logger;
  /** Told of failures of the broker or the database; says how long to back off. */
  health: RelayHealthTracker;
};

/** What every log line about one event says, so an operator can follow that event through the logs. */
function eventFields(row: ClaimedRow) {
  return { eventId: row.id, type: row.event_type, aggregateId: row.aggregate_id, attempt: row.attempts };
}

/**
 * Mark an acknowledged batch published; throws when the database fails (the lease then expires
 * and the events are published again: a duplicate, never a loss; consumers deduplicate).
 * Returns how many were marked, and how many of them unblocked a later event of their aggregate.
 */
export async function markBatchPublished(
  deps: OutcomeDeps,
  rows: ClaimedRow[],
  ackedAt?: number,
): Promise<{ marked: number; unblocked: number }> {
  const { ids, unblocked } = await deps.store.markPublished(
    rows.map((row) => row.id),
    deps.owner,
  );
  countMarked(deps, rows, ids, ackedAt);
  return { marked: ids.size, unblocked };
}

/**
 * Count and log what a mark changed: `ids` are the rows of `rows` really marked (the others'
 * leases another relay took over). markBatchPublished's, and the mark folded into a claim's
 * (claimStep.ts).
 */
export function countMarked(
  deps: OutcomeDeps,
  rows: ClaimedRow[],
  ids: Set<string>,
  /** When the broker acknowledged them: a mark sent with the next claim comes later. */
  ackedAt = Date.now(),
): void {
  // Count only what this relay really marked: a row whose lease another relay took over is that
  // relay's to count (it publishes it again), or the totals of all relays would exceed the events.
  const fenced = rows.length - ids.size;
  if (fenced > 0) {
    deps.metrics.fencedOff.inc(fenced);
    deps.logger.warn({ count: fenced }, 'published events whose lease another relay had taken over');
  }
  for (const row of rows) {
    if (!ids.has(row.id)) continue;
    deps.metrics.published.inc({ event_type: row.event_type });
    deps.metrics.commitToPublish.observe({
      value: (ackedAt - row.created_at.getTime()) / 1000,
      exemplarLabels: exemplarOf(row.headers.traceparent),
    });
  }
  deps.logger.debug({ count: ids.size }, 'batch published');
}

/**
 * Events the broker refused (not because it was unreachable): each is retried after its backoff,
 * or dead-lettered once it used up its attempts or at once when no retry can fix it. Returns how
 * many were dead-lettered.
 */
export async function retryOrDeadLetter(
  deps: OutcomeDeps,
  rows: ClaimedRow[],
  kind: Exclude<PublishFailureKind, 'unavailable'>,
  error: Error,
): Promise<number> {
  let deadLettered = 0;
  for (const row of rows) {
    if (kind === 'permanent' || row.attempts >= deps.maxAttempts) {
      const reason = `${kind === 'permanent' ? 'refused by the broker' : `failed ${row.attempts} attempts`}: ${error.message}`;
      if (await deps.store.markFailed(row.id, deps.owner, reason).catch(() => false)) {
        deps.metrics.deadLettered.inc({ event_type: row.event_type });
        deadLettered += 1;
        deps.logger.error({ ...eventFields(row), reason }, 'event dead-lettered');
      }
    } else {
      const delayMs = backoffDelayMs(row.attempts);
      await deps.store
        .scheduleRetry([row.id], deps.owner, {
          error: error.message,
          delayMs,
          countAttempt: true,
        })
        .catch(() => {});
      deps.logger.warn({ ...eventFields(row), delayMs, err: error }, 'publish failed; will retry');
    }
  }
  return deadLettered;
}

/**
 * Hand claimed rows back unpublished, due again after `delayMs`, without using up an attempt: the
 * broker failing says nothing about the events. If this update fails too, the leases expire and
 * the rows are claimed again anyway.
 */
export async function giveBack(
  deps: OutcomeDeps,
  rows: ClaimedRow[],
  retry: { error: string; delayMs: number },
): Promise<void> {
  if (rows.length === 0) return;
  const ids = rows.map((row) => row.id);
  await deps.store.scheduleRetry(ids, deps.owner, { ...retry, countAttempt: false }).catch(() => {});
}

/** The leases of claimed rows, kept by renewal from the claim until each row has its outcome. */
export type HeldLeases = {
  /** These rows have their outcome (marked, retried, dead-lettered): stop renewing them. */
  settled(rows: ClaimedRow[]): void;
  /** Every row has its outcome: stop renewing. */
  release(): void;
};

/**
 * Rows must stay leased for as long as the relay holds them, not only while the broker has them:
 * a batch claimed behind a slow one (pipelined) waits its turn, and a batch the broker refused
 * goes out again one event at a time; either can outlast the lease, and another relay would then
 * take the rows over and publish them a second time. So renewal starts at the claim, every third
 * of the lease, and stops once every row has an outcome. It is fenced by owner like every other
 * write, so a relay whose lease had already been taken over cannot claw it back.
 */
export function holdLeases(deps: OutcomeDeps, rows: ClaimedRow[]): HeldLeases {
  const held = new Set(rows.map((row) => row.id));
  const renew = () => {
    const ids = [...held];
    if (ids.length === 0) return;
    deps.store
      .renewLeases(ids, deps.owner, deps.leaseMs)
      .then((renewed) => {
        deps.metrics.leaseRenewals.inc();
        // Rows that got their outcome while the renewal ran are not lost, only done.
        const lost = ids.filter((id) => held.has(id)).length - renewed;
        if (lost > 0)
          deps.logger.warn(
            { lost },
            'lease renewal found rows no longer ours; another relay may publish them too',
          );
      })
      .catch((err: unknown) => deps.logger.warn({ err }, 'lease renewal failed'));
  };
  const timer = rows.length > 0 ? setInterval(renew, Math.max(50, Math.floor(deps.leaseMs / 3))) : undefined;
  const release = () => {
    held.clear();
    clearInterval(timer);
  };
  return {
    settled: (done) => {
      for (const row of done) held.delete(row.id);
      if (held.size === 0) release();
    },
    release,
  };
}

/** Claimed rows, leased to this relay until each has its outcome (see holdLeases). */
export type Claimed = { rows: ClaimedRow[]; leases: HeldLeases };

/**
 * A batch the broker acknowledged whose mark waits for the relay's next claim, to go with it
 * (relay.ts, #idle); its leases are held until then.
 */
export type Unmarked = Claimed & { ackedAt: number };

/**
 * A batch's outcome. `heldBack`: the aggregates (aggregateKey) whose events in the batch did not
 * all go out and get marked; the next batch, claimed meanwhile, must not send their later events.
 */
export type Step = {
  claimed: number;
  retryInMs: number;
  heldBack: Set<string>;
  /** Published and acknowledged, its mark left for the next claim (relay.ts #idle). */
  unmarked?: Unmarked;
};
export const clean = (claimed: number): Step => ({ claimed, retryInMs: 0, heldBack: new Set() });
export const aggregateKey = (row: ClaimedRow) => `${row.aggregate_type}/${row.aggregate_id}`;
export const heldBackOf = (rows: ClaimedRow[]) => new Set(rows.map(aggregateKey));

/**
 * The batch before left some aggregates' events unpublished (refused, given back, or not marked):
 * this batch's later events of those aggregates go back unsent, held back behind them (claimSql.ts
 * keeps them there). Resolves to the rows left to send.
 */
export async function giveBackHeldBack(
  deps: OutcomeDeps,
  claimed: Claimed,
  heldBack: Set<string>,
): Promise<ClaimedRow[]> {
  const held = claimed.rows.filter((row) => heldBack.has(aggregateKey(row)));
  if (held.length === 0) return claimed.rows;
  await giveBack(deps, held, {
    error: 'given back unpublished: an earlier event of its aggregate did not go out',
    delayMs: 0,
  });
  claimed.leases.settled(held);
  return claimed.rows.filter((row) => !heldBack.has(aggregateKey(row)));
}

/**
 * The broker did not take these events. Unreachable: they go back without using up an attempt,
 * and the relay backs off. Refused: each is retried after its backoff or dead-lettered.
 */
export async function failBatch(
  deps: OutcomeDeps,
  rows: ClaimedRow[],
  kind: PublishFailureKind,
  error: Error,
): Promise<Step> {
  for (const row of rows) deps.metrics.publishFailures.inc({ event_type: row.event_type, reason: kind });
  if (kind === 'unavailable') {
    const retryInMs = deps.health.degraded('publish', error);
    await giveBack(deps, rows, { error: error.message, delayMs: retryInMs });
    return { claimed: rows.length, retryInMs, heldBack: heldBackOf(rows) };
  }
  deps.health.deadLettered(await retryOrDeadLetter(deps, rows, kind, error));
  return { claimed: rows.length, retryInMs: 0, heldBack: heldBackOf(rows) };
}

/**
 * With a standby to wait for, a batch goes to the broker only once the standby holds its rows,
 * so a failover cannot lose a row whose event is already out (runtime's standbyWait.ts). A standby
 * still behind at the bound: the batch goes back untouched, and the relay backs off as for a
 * broker outage.
 */
export async function untilStandbyHolds(
  deps: OutcomeDeps,
  standbyWait: StandbyWait | undefined,
  rows: ClaimedRow[],
): Promise<Step | undefined> {
  if (!standbyWait) return undefined;
  try {
    await standbyWait.untilStandbyHolds();
    return undefined;
  } catch (err) {
    const error = toError(err);
    const retryInMs = deps.health.degraded('standby', error);
    await giveBack(deps, rows, { error: error.message, delayMs: retryInMs });
    return { claimed: rows.length, retryInMs, heldBack: heldBackOf(rows) };
  }
}
