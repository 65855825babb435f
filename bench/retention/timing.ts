/** How bench:retention times a step and prints its figures. */
import { quantile, round } from '../support/stats.ts';

/** The nearest-rank median (this benchmark's figures have always used it). */
export const nearestRankMedian = (xs: number[]) => quantile(xs, 0.5);
export const now = () => Number(process.hrtime.bigint()) / 1e6;
export const mib = (bytes: number) => round(bytes / 2 ** 20, 1);
export const fmt = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');
export const int = (x: number) => Math.round(x).toLocaleString('en-US');

export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = now();
  const value = await fn();
  return { ms: round(now() - start), value };
}
