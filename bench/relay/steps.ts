/** A relay's own per-step histogram, read from its /metrics (no bench:relay flags needed). */
import { round } from '../support/stats.ts';

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
