import { setTimeout as sleep } from 'node:timers/promises';
import type { ClaimedRow } from '@outbox/outbox';
import { toError } from '@outbox/runtime/errors';
import type { StandbyWait } from '@outbox/runtime/standby-wait';
import {
  type Claimed,
  clean,
  failBatch,
  giveBack,
  giveBackHeldBack,
  heldBackOf,
  markBatchPublished,
  type OutcomeDeps,
  type Step,
  type Unmarked,
  untilStandbyHolds,
} from './batchOutcomes.ts';
import { claimRows } from './claimStep.ts';
import { withFaultPoints } from './faultPoints.ts';
import { timedPublisher, timedStore } from './metrics.ts';
import { publishOneAtATime } from './oneAtATime.ts';
import { classifyPublishError } from './publishErrors.ts';
import { type Publisher, toOutgoingEvent } from './publisher.ts';
import type { RelayDeps } from './relayDeps.ts';
import { type RelayHealth, RelayHealthTracker } from './relayHealth.ts';
import { marksWithNextClaim, nextClaimSize, type RelayOptions } from './relayOptions.ts';
import type { Wakeup } from './wakeup.ts';

export type { RelayOptions };

/**
 * The relay loop: claim a batch of due outbox rows, publish them, mark them published; repeat
 * while there is work (under a backlog, claiming the next batch while the broker has the
 * previous one), sleep until NOTIFY or the poll interval when there is none.
 *
 * When a publish fails, what happens depends on why (see publishErrors.ts): broker unavailable →
 * the batch goes back untouched and the relay backs off; otherwise the batch is retried one event
 * at a time, so one poison event is found and dealt with while the others go out.
 */
export class Relay {
  readonly #publisher: Publisher;
  readonly #wakeup: Wakeup;
  readonly #options: RelayOptions;
  readonly #outcomes: OutcomeDeps;
  readonly #standbyWait: StandbyWait | undefined;
  #running: Promise<void> | undefined;
  #stopping = false;
  /** Aborted by stop(): ends a backoff or a linger, which nothing else may cut short (#pause). */
  readonly #stopped = new AbortController();
  #lastClaimed = 0;
  /** When the claim that found the last batch was sent (performance.now()). */
  #lastBatchAt = Number.NEGATIVE_INFINITY;
  /** An acknowledged batch whose mark waits for the next claim (#idle). */
  #unmarked: Unmarked | undefined;
  readonly #health: RelayHealthTracker;

  constructor(deps: RelayDeps) {
    // The ports, decorated once: each claim, publish and mark timed, and the test-only fault
    // points where they are armed. The loop below calls the ports and nothing else.
    const timed = {
      store: timedStore(deps.store, deps.metrics),
      publisher: timedPublisher(deps.publisher, deps.metrics),
    };
    const { store, publisher } = deps.faults ? withFaultPoints(timed, deps.faults) : timed;
    this.#publisher = publisher;
    this.#wakeup = deps.wakeup;
    this.#health = new RelayHealthTracker(deps.logger);
    this.#options = deps.options;
    const { id: owner, leaseMs, maxAttempts } = deps.options;
    this.#standbyWait = deps.standbyWait;
    this.#outcomes = {
      store,
      owner,
      leaseMs,
      maxAttempts,
      metrics: deps.metrics,
      logger: deps.logger,
      health: this.#health,
    };
  }

  /** What /healthz reports; see relayHealth.ts. */
  get health(): RelayHealth {
    return this.#health.state;
  }

  start(): void {
    this.#running ??= this.#loop();
  }

  /**
   * Claims only when a claim can find something. After a claim:
   * - it filled its limit, or a wake-up arrives since it was sent and before the broker has
   *   acknowledged this batch (a NOTIFY, or the previous batch's mark unblocking an aggregate's
   *   next event): there is more to claim, so the next claim runs while the broker has this
   *   batch (pipelined) — unless a partial batch keeps its mark for the next claim
   *   (marksWithNextClaim), which then waits for the ack and carries the mark (#idle);
   * - otherwise the outbox had nothing more at that moment: the batch is published and marked,
   *   and the relay claims again only if a wake-up arrived since the claim (this batch's own mark
   *   included), else it sleeps until one comes (and lingers, #idle) or the poll interval passes
   *   (the safety net for a lost NOTIFY and for retries whose backoff ran out).
   * A mark that makes an aggregate's next event its head wakes the relay (#published), so a
   * backlog on one aggregate drains claim after claim, never at the poll's pace.
   *
   * Order per aggregate under pipelining: the next claim may extend the runs of the batch in hand
   * (claimSql.ts), and it is sent only once the broker acknowledged that batch; the next batch's
   * events of an aggregate the batch in hand did not fully publish and mark are given back first
   * (giveBackHeldBack). At most one batch is with the broker at a time, and one more is claimed.
   */
  async #loop(): Promise<void> {
    let delivering: Promise<Step> | undefined;
    let inHand: string[] = [];
    while (!this.#stopping) {
      const limit = nextClaimSize(this.#options, this.#lastClaimed);
      this.#wakeup.reset();
      const claimedAt = performance.now();
      const claimed = await claimRows(this.#outcomes, limit, inHand, this.#unmarked);
      if ('rows' in claimed) {
        this.#lastClaimed = claimed.rows.length;
        this.#unmarked = undefined;
      }
      const previous = delivering ? await delivering : undefined;
      delivering = undefined;
      inHand = [];
      if ('retryInMs' in claimed) {
        await this.#pause(claimed.retryInMs);
        continue;
      }
      if (previous && previous.retryInMs > 0) {
        // The broker just failed the previous batch: give this one back untouched rather than
        // hold its leases through the backoff.
        await giveBack(this.#outcomes, claimed.rows, {
          error: 'given back unpublished: the broker failed the batch before it',
          delayMs: 0,
        });
        claimed.leases.release();
        await this.#pause(previous.retryInMs);
        continue;
      }
      const full = claimed.rows.length === limit;
      if (previous) claimed.rows = await giveBackHeldBack(this.#outcomes, claimed, previous.heldBack);
      if (claimed.rows.length === 0 && full) continue;
      if (claimed.rows.length > 0) {
        // A batch that keeps its mark for the next claim is not pipelined: the next claim waits for
        // the ack to carry the mark. Its events go out no later: a pipelined batch, too, is sent
        // only once the one before is acknowledged and marked.
        const deferMark = !full && marksWithNextClaim(this.#options, claimedAt - this.#lastBatchAt);
        this.#lastBatchAt = claimedAt;
        const batch = this.#deliver(claimed, deferMark);
        if (full || (!deferMark && (await this.#wakeup.wokenBefore(batch)))) {
          delivering = batch;
          inHand = claimed.rows.map((row) => row.id);
          continue;
        }
        const step = await batch;
        this.#unmarked = step.unmarked;
        if (step.retryInMs > 0) {
          await this.#pause(step.retryInMs);
          continue;
        }
      }
      await this.#idle();
    }
    if (delivering) await delivering;
    if (this.#unmarked) await this.#markAlone(this.#unmarked);
    this.#unmarked = undefined;
  }

  /**
   * Sleep until a wake-up or the poll interval, unless stopping; return at once when a wake-up
   * arrived since the last claim. When a wake-up ends a sleep, the relay was idle: it lingers
   * (RELAY_LINGER_MS) before claiming, so that the rows committed meanwhile go out in one claim,
   * one publish and one mark instead of one each. Only here: a relay catching up (a full claim,
   * a pipelined one, a wake-up that came while it was busy) never lingers.
   */
  async #idle(): Promise<void> {
    if (this.#stopping) return;
    const { pollIntervalMs, lingerMs = 0, markWithNextClaimMs = 0 } = this.#options;
    if (this.#unmarked) {
      // Marked by the next claim, in the same statement, if a wake-up comes within the bound: one
      // statement per batch instead of two. If none comes it is marked alone, leases held till then.
      if (this.#wakeup.pending) return;
      if (await this.#wakeup.sleep(markWithNextClaimMs)) {
        if (lingerMs > 0) await this.#pause(lingerMs);
        return;
      }
      const unmarked = this.#unmarked;
      this.#unmarked = undefined;
      await this.#markAlone(unmarked);
    }
    if ((await this.#wakeup.sleep(pollIntervalMs)) && lingerMs > 0) await this.#pause(lingerMs);
  }

  /** Mark a batch whose mark waited for a claim that did not come; its leases end here. */
  async #markAlone({ rows, leases, ackedAt }: Unmarked): Promise<boolean> {
    try {
      return await this.#published(rows, ackedAt);
    } finally {
      leases.release();
    }
  }

  /**
   * Wait `ms`, cut short by stop() alone: a backoff (after a failure of the broker or the
   * database) or a linger (#idle). A wake-up ends neither. A NOTIFY says a row was committed,
   * nothing about the broker: with one per order a backoff would hit a broker that is down at the
   * order rate, so new rows wait for the broker like the rows given back. A linger lets more pass.
   */
  async #pause(ms: number): Promise<void> {
    await sleep(ms, undefined, { signal: this.#stopped.signal }).catch(() => {});
  }

  /** Claim and publish one batch, without pipelining: the debezium mode's drain steps the relay so, and tests do. */
  async drainOnce(): Promise<Step> {
    const claimed = await claimRows(this.#outcomes, this.#options.batchSize, []);
    if ('retryInMs' in claimed) return { ...clean(0), retryInMs: claimed.retryInMs };
    if (claimed.rows.length === 0) return clean(0);
    return this.#deliver(claimed, false);
  }

  /**
   * Publish a claimed batch and mark it published; on failure, deal with each event by kind. The
   * rows' leases are renewed until every one has its outcome (`return await`: the finally must
   * wait for the one-at-a-time retry too, not only for its first step). With `deferMark`, once
   * the broker acknowledged the batch its mark is left for the next claim (#idle), the leases held.
   */
  async #deliver({ rows, leases }: Claimed, deferMark: boolean): Promise<Step> {
    let keepLeases = false;
    try {
      const standbyBehind = await untilStandbyHolds(this.#outcomes, this.#standbyWait, rows);
      if (standbyBehind) return standbyBehind;
      const error = await this.#send(rows);
      if (!error) {
        if (deferMark) {
          keepLeases = true;
          return { ...clean(rows.length), unmarked: { rows, leases, ackedAt: Date.now() } };
        }
        const marked = await this.#published(rows);
        return marked ? clean(rows.length) : { ...clean(rows.length), heldBack: heldBackOf(rows) };
      }
      const kind = classifyPublishError(error);
      if (kind === 'unavailable' || rows.length === 1)
        return await failBatch(this.#outcomes, rows, kind, error);
      // Something in the batch was refused: find it by publishing one event at a time, and hold
      // back the rest of the refused event's aggregate.
      return await publishOneAtATime(
        { publisher: this.#publisher, outcomes: this.#outcomes, published: (one) => this.#published(one) },
        rows,
        leases,
      );
    } finally {
      if (!keepLeases) leases.release();
    }
  }

  /** One publish of the whole batch; resolves to the error when the broker did not take it. */
  async #send(rows: ClaimedRow[]): Promise<Error | undefined> {
    try {
      await this.#publisher.publish(rows.map(toOutgoingEvent));
      return undefined;
    } catch (err) {
      return toError(err);
    }
  }

  /** Acknowledged by the broker: mark published (fenced by our lease). False if the mark failed. */
  async #published(rows: ClaimedRow[], ackedAt?: number): Promise<boolean> {
    let marked: Awaited<ReturnType<typeof markBatchPublished>>;
    try {
      marked = await markBatchPublished(this.#outcomes, rows, ackedAt);
    } catch (err) {
      this.#health.degraded('mark-published', toError(err));
      return false;
    }
    // An aggregate's next event became claimable, and no NOTIFY will say so: claim again.
    if (marked.unblocked > 0) this.#wakeup.wake();
    this.#health.published(marked.marked);
    return true;
  }

  /** Stop claiming; the batch in hand is finished (published, or given back) before this resolves. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#stopped.abort();
    this.#wakeup.wake();
    await this.#running;
  }
}
