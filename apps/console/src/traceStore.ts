import { errorMessage, fetchWithTimeout } from './services.ts';
import type { TracesStatus } from './shared/apiTypes.ts';

/**
 * Whether the trace store (the demo's Zipkin) answers right now. Zipkin keeps its traces in
 * memory: while it is down, or just restarted by the demo, a trace link leads to an error page or
 * an empty trace, so the page shows "traces unavailable" instead of links (ordersView). Asked on
 * `GET /health`, at most once per `ttlMs` whatever the number of pages polling the console.
 */
export class TraceStoreProbe {
  readonly #healthUrl: string;
  readonly #ttlMs: number;
  #last: { at: number; status: Promise<TracesStatus> } | undefined;

  constructor(zipkinUrl: string, ttlMs = 5000) {
    this.#healthUrl = `${zipkinUrl.replace(/\/+$/, '')}/health`;
    this.#ttlMs = ttlMs;
  }

  status(): Promise<TracesStatus> {
    if (!this.#last || Date.now() - this.#last.at >= this.#ttlMs) {
      this.#last = { at: Date.now(), status: this.#probe() };
    }
    return this.#last.status;
  }

  async #probe(): Promise<TracesStatus> {
    try {
      const res = await fetchWithTimeout(this.#healthUrl);
      await res.arrayBuffer();
      if (res.ok) return { available: true };
      return { available: false, reason: `Zipkin's /health answered ${res.status}.` };
    } catch (err) {
      return {
        available: false,
        reason: `Zipkin does not answer (${errorMessage(err)}); the demo restarts it when it dies, and its traces so far are lost.`,
      };
    }
  }
}
