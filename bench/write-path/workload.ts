/** The workload (the same fixed sequence of orders for every variant) and how it is timed. */
import { DEMO_CATALOG } from '@outbox/contracts';
import type { OrderRequest, Prisma } from '@outbox/orders';
import pg from 'pg';
import { median } from '../support/stats.ts';
import type { Variant } from './variants.ts';

/** 1 to 3 lines from the demo catalog the orders migrations seed. */
export const SKUS = DEMO_CATALOG.map((product) => product.sku);
export const requests: OrderRequest[] = Array.from({ length: 60 }, (_, i) => {
  const lines = 1 + (i % 3);
  return {
    customerId: `bench-customer-${i % 7}`,
    currency: 'EUR',
    items: Array.from({ length: lines }, (_, j) => ({
      sku: SKUS[(i + j * 2) % SKUS.length] as string,
      quantity: 1 + ((i + j) % 4),
    })),
  };
});
let requestCursor = 0;
export const nextRequest = () => requests[requestCursor++ % requests.length] as OrderRequest;

export async function runLatency(prisma: Prisma, variant: Variant, n: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const request = nextRequest();
    const start = process.hrtime.bigint();
    await variant.run(prisma, request);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return samples;
}

export async function runThroughput(prisma: Prisma, variant: Variant, concurrency: number, n: number) {
  let issued = 0;
  const latencies: number[] = [];
  const worker = async () => {
    while (issued < n) {
      issued++;
      const request = nextRequest();
      const start = process.hrtime.bigint();
      await variant.run(prisma, request);
      latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
  return { elapsedMs, txPerSec: (n / elapsedMs) * 1000, medianLatencyMs: median(latencies) };
}

/**
 * Statements per transaction as sent: node-postgres' Client#query calls (every statement of the
 * Prisma adapter, BEGIN and COMMIT included) over `n` transactions one after another, after a
 * pass over the whole request sequence that is not counted (it reads the catalog, opens a connection).
 */
export async function countStatements(prisma: Prisma, variant: Variant, n: number): Promise<number> {
  for (let i = 0; i < requests.length; i++) await variant.run(prisma, nextRequest());
  let sent = 0;
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    sent++;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    for (let i = 0; i < n; i++) await variant.run(prisma, nextRequest());
  } finally {
    pg.Client.prototype.query = original;
  }
  return sent / n;
}
