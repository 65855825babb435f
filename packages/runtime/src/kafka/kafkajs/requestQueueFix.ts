import { createRequire } from 'node:module';

type RequestQueue = {
  pending: unknown[];
  inflight: Map<number, { sentAt: number; requestTimeout: number; timeoutRequest(): void }>;
  requestTimeout: number;
  enforceRequestTimeout: boolean;
  requestTimeoutIntervalId: ReturnType<typeof setInterval> | undefined;
  isConnected(): boolean;
  destroy(): void;
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
  scheduleRequestTimeoutCheck(): void;
};

/** kafkajs' own interval for re-checking a queue that holds requests (src/network/requestQueue). */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

let installed = false;

/**
 * Stops kafkajs 2.2.4 spinning a 1 ms timer on every broker connection for as long as it is open.
 *
 * Its RequestQueue re-schedules `checkPendingRequests` after every check, even with nothing pending
 * and no throttle, with a negative delay that Node clamps to 1 ms (tulios/kafkajs#1556, #1704; the
 * fix in PR #1667 was never released). Every process with a kafkajs client then burned ~3% of a core
 * doing nothing, and Node >= 23 printed a TimeoutNegativeWarning for it. A check is only needed when
 * requests wait (then kafkajs' 10 ms interval) or the broker throttles us (then when the throttle
 * ends); a new request (`push`) and every answered or timed-out request check the queue anyway.
 * docs/benchmarks.md has the idle CPU before and after.
 */
export function fixKafkajsIdleTimerLoop(): void {
  if (installed) return;
  installed = true;
  const require = createRequire(import.meta.url);
  const RequestQueue: { prototype: RequestQueue } = require('kafkajs/src/network/requestQueue/index.js');
  RequestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(
    this: RequestQueue,
  ) {
    if (this.throttleCheckTimeoutId) return;
    const throttledForMs = this.throttledUntil - Date.now();
    if (this.pending.length === 0 && throttledForMs <= 0) return;
    const delayMs = throttledForMs > 0 ? throttledForMs : CHECK_PENDING_REQUESTS_INTERVAL_MS;
    this.throttleCheckTimeoutId = setTimeout(() => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    }, delayMs);
  };
  // Each connection also checks its in-flight requests for a timeout every min(requestTimeout,
  // 100 ms), connected or idle: ten wake-ups a second per connection, for ever. A tenth of the
  // request timeout, at most 1 s, finds a timed-out request as surely (30 s: at most 1 s late).
  // The body is kafkajs' own (src/network/requestQueue/index.js).
  RequestQueue.prototype.scheduleRequestTimeoutCheck = function scheduleRequestTimeoutCheck(
    this: RequestQueue,
  ) {
    if (!this.enforceRequestTimeout) return;
    this.destroy();
    const everyMs = Math.max(Math.min(this.requestTimeout, 100), Math.min(this.requestTimeout / 10, 1000));
    this.requestTimeoutIntervalId = setInterval(() => {
      for (const request of this.inflight.values()) {
        if (Date.now() - request.sentAt > request.requestTimeout) request.timeoutRequest();
      }
      if (!this.isConnected()) this.destroy();
    }, everyMs);
  };
}
