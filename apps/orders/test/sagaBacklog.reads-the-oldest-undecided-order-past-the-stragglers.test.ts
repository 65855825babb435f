// The saga backlog the adaptive admission limit reads (src/saga/sagaBacklog.ts): the age of the
// oldest PENDING order past ten stragglers, from the real database. Ten orders stuck for minutes
// do not count; an eleventh old one does; decided orders never do. While nobody asks (an idle API)
// it reads nothing and forgets the last value.

import { setTimeout as sleep } from 'node:timers/promises';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually } from '@outbox/devstack/testing/stack';
import { createTestDatabase, queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma, migrate, type Prisma } from '../src/db.ts';
import { type SagaBacklog, startSagaBacklog } from '../src/saga/sagaBacklog.ts';

useLeakGuard();

let db: TestDatabase;
let prisma: Prisma;
let backlog: SagaBacklog | undefined;
beforeAll(async () => {
  db = await createTestDatabase('orders_saga_backlog');
  await migrate(db.url);
  prisma = createPrisma(db.url);
});
afterAll(async () => {
  await backlog?.stop();
  await prisma?.$disconnect();
  await db?.drop();
});

/** `count` orders in `status`, placed `ageSeconds` ago. */
const insert = (count: number, status: string, ageSeconds: number) =>
  queryOnce(
    db.url,
    `insert into orders (id, customer_id, currency, status, total_cents, created_at)
     select gen_random_uuid(), 'backlog', 'EUR', $1, 100, now() - make_interval(secs => $2::float8)
       from generate_series(1, $3::int)`,
    [status, ageSeconds, count],
  );

describe('the saga backlog', () => {
  it('is the age of the oldest undecided order past the ten oldest', async () => {
    await insert(10, 'PENDING', 600); // stuck on a lost reply: the saga's timeout settles them
    await insert(50, 'CONFIRMED', 900);
    backlog = startSagaBacklog({ prisma, logger: pino({ level: 'silent' }), intervalMs: 50 });
    await eventually('the first reading', async () => (backlog?.ageMs() === 0 ? true : undefined));

    await insert(1, 'PENDING', 5);
    const age = await eventually('the eleventh undecided order is read', async () => {
      const ms = backlog?.ageMs() ?? 0;
      return ms > 0 ? ms : undefined;
    });
    expect(age).toBeGreaterThanOrEqual(5_000);
    expect(age).toBeLessThan(60_000);
  });

  it('reads nothing while nobody asks, and reads again once asked', async () => {
    const idleAfterMs = 200;
    const idle = startSagaBacklog({ prisma, logger: pino({ level: 'silent' }), intervalMs: 50, idleAfterMs });
    try {
      await eventually('a reading', async () => ((idle.ageMs() ?? 0) > 0 ? true : undefined));
      // A quiet spell, not a race: any wait past idleAfterMs and one interval shows the same.
      await sleep(idleAfterMs * 10);
      expect(idle.ageMs()).toBeUndefined();
      await eventually('reading again once asked', async () => ((idle.ageMs() ?? 0) > 0 ? true : undefined));
    } finally {
      await idle.stop();
    }
  });
});
