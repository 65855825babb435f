/**
 * The orders API's own account of the refusals of one step, from its /metrics: how many it shed, by
 * reason, and how long each took from the request's arrival to its 503 (http_admission_refusal_seconds),
 * on the API's clock, where the load generator's wait for a core of a busy machine cannot blur it.
 */
export type Refusals = {
  shed: number;
  byReason: Record<string, number>;
  /** Share of the refusals answered within 50 ms of the request's arrival. */
  within50ms: number;
  /** The smallest histogram bucket that holds 99% of the refusals, ms (undefined: none refused). */
  p99AtMostMs?: number;
};

type Scrape = Map<string, number>;

export async function scrapeOrders(ordersUrl: string): Promise<Scrape> {
  const text = await (await fetch(`${ordersUrl}/metrics`)).text();
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('http_admission_')) continue;
    const at = line.lastIndexOf(' ');
    series.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return series;
}

/** What changed between two scrapes of the same orders API. */
export function refusalsBetween(before: Scrape, after: Scrape): Refusals {
  const delta = (key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);
  const byReason: Record<string, number> = {};
  const buckets: { le: number; count: number }[] = [];
  for (const key of after.keys()) {
    // Every series also carries the registry's default label (service="orders").
    const reason = /^http_admission_shed_total\{.*reason="([^"]+)"/.exec(key)?.[1];
    if (reason) byReason[reason] = delta(key);
    const le = /^http_admission_refusal_seconds_bucket\{.*le="([^"]+)"/.exec(key)?.[1];
    if (le) buckets.push({ le: Number(le), count: delta(key) });
  }
  const countKey = [...after.keys()].find((key) => key.startsWith('http_admission_refusal_seconds_count'));
  const shed = countKey ? delta(countKey) : 0;
  const within = buckets.find((b) => b.le === 0.05)?.count ?? 0;
  const p99 = buckets.sort((a, b) => a.le - b.le).find((b) => b.count >= 0.99 * shed);
  return {
    shed,
    byReason,
    within50ms: shed === 0 ? 1 : Number((within / shed).toFixed(4)),
    ...(shed > 0 && p99 ? { p99AtMostMs: p99.le * 1000 } : {}),
  };
}
