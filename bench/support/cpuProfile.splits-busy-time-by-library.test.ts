import { describe, expect, it } from 'vitest';
import { type CpuProfile, profileShares } from './cpuProfile.ts';

const frame = (functionName: string, url = '') => ({ functionName, url });
const APP = 'file:///app';

// root ─┬─ (idle)
//       ├─ (garbage collector)
//       ├─ handler (our code) ── $transaction (Prisma) ── query (pg) ── writev
//       ├─ onResponse (express) ── writev
//       ├─ poll (pg, the consumer's own pool) ── submit (pg)
//       └─ parse (zod)
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 3, 4, 8, 10, 12] },
    { id: 2, callFrame: frame('(idle)') },
    { id: 3, callFrame: frame('(garbage collector)') },
    { id: 4, callFrame: frame('handler', `${APP}/apps/orders/src/http/ordersRouter.ts`), children: [5] },
    {
      id: 5,
      callFrame: frame('$transaction', `${APP}/node_modules/@prisma/client/runtime/client.js`),
      children: [6],
    },
    { id: 6, callFrame: frame('query', `${APP}/node_modules/pg/lib/client.js`), children: [7] },
    { id: 7, callFrame: frame('writev') },
    { id: 8, callFrame: frame('onResponse', `${APP}/node_modules/express/lib/response.js`), children: [9] },
    { id: 9, callFrame: frame('writev') },
    { id: 10, callFrame: frame('poll', `${APP}/node_modules/pg-pool/index.js`), children: [11] },
    { id: 11, callFrame: frame('submit', `${APP}/node_modules/pg/lib/query.js`) },
    { id: 12, callFrame: frame('parse', `${APP}/node_modules/zod/v4/core/schemas.js`) },
  ],
  startTime: 1_000_000,
  // One sample per millisecond: idle 4, GC 1, Prisma's write 3, express' write 1, pg 2, zod 1.
  samples: [2, 2, 7, 7, 7, 3, 9, 11, 11, 12, 2, 2],
  timeDeltas: Array(12).fill(1000),
};

describe('profileShares', () => {
  it('splits busy time by the library on the stack, Prisma before the node-postgres it drives', () => {
    const shares = profileShares(profile);
    expect(shares.busyMs).toBe(8);
    expect(shares.parts).toEqual([
      { part: 'Prisma (node-postgres below it included)', ms: 3 },
      { part: 'node-postgres', ms: 2 },
      { part: '(garbage collector)', ms: 1 },
      { part: 'HTTP (express, node:http)', ms: 1 },
      { part: 'other (our code, zod, Node internals, microtasks)', ms: 1 },
    ]);
  });

  it('counts socket writes whoever called them', () => {
    expect(profileShares(profile).socketWritesMs).toBe(4);
  });

  it('keeps only the samples taken inside the window', () => {
    // Samples are stamped at startTime + the running sum of deltas: the 3rd to 7th fall in here.
    const shares = profileShares(profile, { fromUs: 1_003_000, toUs: 1_007_000 });
    expect(shares.busyMs).toBe(5);
    expect(shares.socketWritesMs).toBe(4);
  });
});
