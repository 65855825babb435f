import { randomUUID } from 'node:crypto';
import type { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { postRaw } from './httpClient.ts';
import type { OrderKind, PlannedOrder } from './orderMix.ts';

/** What happened to one order request, after any retries. */
export type SentOrder = {
  kind: OrderKind;
  /** The last answer's status, or 'network-error' when the last attempt got no answer at all. */
  status: number | 'network-error';
  orderId?: string;
  /** Client clock (epoch ms) when the 201 arrived. */
  acceptedAt?: number;
  attempts: number;
  problem?: { type?: string; title?: string; fields?: string[] };
  /** The last attempt's connection error or timeout. */
  error?: string;
  /** Sent with every attempt of this order. */
  idempotencyKey: string;
  /** For an invalid request: what is wrong with it, and the status the API should answer. */
  fault?: { name: string; expectedStatus: number };
  /** The 201 was a replay: an earlier attempt had created the order (Idempotent-Replayed: true). */
  replayed?: boolean;
  /** Attempts the API shed (503 overloaded: refused before any work, nothing written). */
  shedAnswers?: number;
  /** How long the last attempt took to be answered (or to fail), on the client's clock. */
  lastAttemptMs?: number;
  /**
   * Attempts that got no answer (a timeout, a dropped connection): the API may have created the
   * order then, whatever later attempts were answered (a 201 replay says so; a shed retry cannot).
   */
  unanswered?: number;
};

/** The orders API's answer when it sheds load: it did not start the request, which may be sent again. */
const OVERLOADED = 'urn:problem:overloaded';

/**
 * The order's last answer was "overloaded": shed, not failed. Nothing was written for it, and
 * whether to send it again later is the client's choice; the API did its job by refusing it fast.
 */
export function isShed(sent: SentOrder): boolean {
  return sent.status === 503 && sent.problem?.type === OVERLOADED;
}

export type RetryPolicy = {
  /** Attempts in all, the first one included. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Per attempt: no complete answer by then counts as a network error. */
  timeoutMs: number;
};

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 5,
  baseDelayMs: 100,
  maxDelayMs: 5_000,
  timeoutMs: 10_000,
};

/**
 * Answers that say "not now": the orders API's 503 when it sheds load or its database is away
 * (nothing was written either way) or when a commit's answer was lost and could not be checked (the order may exist: the retry's
 * same key answers with it or creates it once), a proxy's 502/504, a rate limiter's 429. Anything
 * else is final: a 4xx will not get better by repeating it, and a 500 is a bug to report, not to hammer.
 */
const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

/**
 * Send one order the way a production client of an outbox-backed API should: with an
 * Idempotency-Key, and retrying transient failures with that SAME key. A timeout or a dropped
 * connection does not tell the client whether the order was created; with the key, the retry
 * either creates it or gets the one the lost attempt created (a replay), never a second order.
 * Backoff is exponential with full jitter, so many clients failing together do not retry in
 * lockstep; a Retry-After from the server is waited out first (up to `maxDelayMs`), and the
 * jittered backoff comes on top of it: clients shed together must not all come back together.
 * An aborted `signal` stops further retries; the attempt in flight is finished, not abandoned.
 */
export async function sendOrder(
  agent: Agent,
  ordersUrl: URL,
  planned: PlannedOrder,
  retry: RetryPolicy,
  signal?: AbortSignal,
): Promise<SentOrder> {
  const idempotencyKey = randomUUID();
  const sent: SentOrder = {
    kind: planned.kind,
    status: 'network-error',
    attempts: 0,
    idempotencyKey,
    ...(planned.fault ? { fault: planned.fault } : {}),
  };
  while (true) {
    sent.attempts++;
    let retryAfterMs = 0;
    const attemptStarted = performance.now();
    try {
      const response = await postRaw(
        agent,
        ordersUrl,
        planned.body,
        { 'idempotency-key': idempotencyKey },
        retry.timeoutMs,
      ).finally(() => {
        sent.lastAttemptMs = performance.now() - attemptStarted;
      });
      sent.status = response.status;
      delete sent.error;
      const json = parseJson(response.body);
      if (response.status === 201) {
        const id = (json as { id?: unknown } | undefined)?.id;
        if (typeof id === 'string') sent.orderId = id;
        else sent.error = 'the 201 answer carried no order id';
        sent.acceptedAt = Date.now();
        if (response.headers['idempotent-replayed'] === 'true') sent.replayed = true;
        delete sent.problem;
        return sent;
      }
      sent.problem = toProblem(json);
      if (isShed(sent)) sent.shedAnswers = (sent.shedAnswers ?? 0) + 1;
      if (!RETRYABLE_STATUSES.has(response.status)) return sent;
      retryAfterMs = Number(response.headers['retry-after'] ?? 0) * 1000 || 0;
    } catch (err) {
      sent.status = 'network-error';
      sent.unanswered = (sent.unanswered ?? 0) + 1;
      sent.error = err instanceof Error ? err.message : String(err);
      delete sent.problem;
    }
    if (sent.attempts >= retry.attempts || signal?.aborted) return sent;
    const backoff = Math.random() * Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (sent.attempts - 1));
    const delayMs = Math.min(retry.maxDelayMs, retryAfterMs) + backoff;
    await sleep(delayMs, undefined, { signal }).catch(() => undefined);
    if (signal?.aborted) return sent;
  }
}

/** The reason a request counts as rejected, for the summary: status and problem type. */
export function rejectionReason(sent: SentOrder): string {
  if (sent.status === 'network-error') return 'network error';
  const type = sent.problem?.type?.replace(/^urn:problem:/, '');
  return type ? `${sent.status} ${type}` : String(sent.status);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The parts of an RFC 9457 problem the summary uses; the offending fields from `errors`. */
function toProblem(json: unknown): SentOrder['problem'] {
  if (typeof json !== 'object' || json === null) return undefined;
  const { type, title, errors } = json as { type?: unknown; title?: unknown; errors?: unknown };
  const fields = Array.isArray(errors)
    ? errors.map((e: { pointer?: string; parameter?: string; header?: string }) =>
        String(e.pointer ?? e.parameter ?? e.header),
      )
    : undefined;
  return {
    ...(typeof type === 'string' ? { type } : {}),
    ...(typeof title === 'string' ? { title } : {}),
    ...(fields ? { fields } : {}),
  };
}
