import { fetchWithTimeout } from './services.ts';

// The little of Prometheus's HTTP API the console reads: range queries for the charts, and the
// rules with their alerts for the alerts panel. Timeouts are short: a slow Prometheus shows as an
// error on the page, never as a page that hangs.

export type RangeSeries = { metric: Record<string, string>; values: [number, string][] };

export type AlertingRule = {
  type: 'alerting' | 'recording';
  name: string;
  state?: 'inactive' | 'pending' | 'firing';
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  duration?: number;
  alerts?: {
    labels: Record<string, string>;
    annotations: Record<string, string>;
    state: 'pending' | 'firing';
    activeAt: string;
    value: string;
  }[];
};

export type RuleGroup = { name: string; interval: number; rules: AlertingRule[] };

type Answer<T> = { status: 'success' | 'error'; data?: T; error?: string };

async function call<T>(url: string, body?: URLSearchParams): Promise<T> {
  const res = await fetchWithTimeout(
    url,
    body ? { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body } : {},
    3000,
  );
  const answer = (await res.json()) as Answer<T>;
  if (answer.status !== 'success' || answer.data === undefined) {
    throw new Error(`Prometheus answered ${res.status}: ${answer.error ?? 'no data'}`);
  }
  return answer.data;
}

export function prometheusClient(baseUrl: string) {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    /** `query_range` from `start` to `end` (Unix seconds) every `step` seconds. */
    queryRange: async (expr: string, start: number, end: number, step: number): Promise<RangeSeries[]> =>
      (
        await call<{ result: RangeSeries[] }>(
          `${base}/api/v1/query_range`,
          new URLSearchParams({ query: expr, start: String(start), end: String(end), step: String(step) }),
        )
      ).result,
    /** Every rule group Prometheus evaluates, alerting rules with their current alerts. */
    rules: async (): Promise<RuleGroup[]> =>
      (await call<{ groups: RuleGroup[] }>(`${base}/api/v1/rules?type=alert`)).groups,
  };
}

export type PrometheusClient = ReturnType<typeof prometheusClient>;
