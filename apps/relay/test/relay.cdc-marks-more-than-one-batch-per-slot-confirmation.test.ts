import { randomBytes } from 'node:crypto';
import { dropReplicationSlot, logicalDecodingUnavailable } from '@outbox/devstack/logical-decoding';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { type LogicalSlotReader, startLogicalSlotReader } from '@outbox/devstack/testing/logical-slot-reader';
import { insertEvents } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce, testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCdcConfirmation } from '../src/cdc/cdcConfirmation.ts';
import { type InProcessRelay, startInProcessRelay } from './inProcessRelay.ts';

/**
 * In debezium mode the slot confirms a position only at Connect's offset commits (a minute apart by
 * default). A relay that kept one mark outstanding marked at most one mark's rows per confirmation,
 * and an outbox written faster than that would grow `pending` for ever. Here a mark takes 5 rows,
 * and the slot's reader (pg_recvlogical) is paused (SIGSTOP) while 150 rows are written: the relay
 * takes several marks that nothing confirms, and the reader's first confirmation once resumed lets
 * one tick mark several of them. Counted in ticks, not seconds, so a slow machine cannot fail it.
 */

const unavailable = await logicalDecodingUnavailable(testPostgresUrl);
if (unavailable) console.warn(`skipped: ${unavailable}`);

useLeakGuard();

const slot = `relay_marks_${randomBytes(3).toString('hex')}`;
let setup: InProcessRelay | undefined;
let reader: LogicalSlotReader | undefined;
let confirmation: { stop(): Promise<void> } | undefined;
let marked = 0;
let drained = false;
/** The confirmation's ticks so far (each starts by reading the slot's reader), and marks per tick. */
let ticks = 0;
const marksInTick = new Map<number, number>();

beforeAll(async () => {
  if (unavailable) return;
  setup = await startInProcessRelay('relay_cdc_marks', sharedKafkaBrokers());
  reader = await startLogicalSlotReader(setup.db.url, slot);
  confirmation = startCdcConfirmation({
    store: setup.store,
    relay: setup.relay,
    slot,
    intervalMs: 100,
    pollIntervalMs: 100,
    logger: pino({ level: 'silent' }),
    markBatchSize: 5,
    onMarked: (count) => {
      marked += count;
      marksInTick.set(ticks, (marksInTick.get(ticks) ?? 0) + 1);
    },
    onDrained: () => {
      drained = true;
    },
  });
  await eventually('the slot drained', async () => (drained ? true : undefined));
}, 60_000);

afterAll(async () => {
  await confirmation?.stop();
  await reader?.stop();
  if (setup) await dropReplicationSlot(setup.db.url, slot);
  await setup?.dispose();
});

describe.skipIf(unavailable !== undefined)('the relay in debezium mode', () => {
  it('marks many marks of rows published at one confirmation of the slot', async () => {
    const { store, db } = setup ?? {};
    const paused = reader?.pid;
    if (!store || !db || paused === undefined) throw new Error('no relay or no reader');
    const readSlotReader = store.readSlotReader;
    store.readSlotReader = (...args) => {
      ticks += 1;
      return readSlotReader(...args);
    };
    let taken = 0;
    const takeConfirmationMark = store.takeConfirmationMark;
    store.takeConfirmationMark = async (...args) => {
      const mark = await takeConfirmationMark(...args);
      if (mark.ids.length > 0) taken += 1;
      return mark;
    };
    process.kill(paused, 'SIGSTOP');
    try {
      await insertEvents(db.url, { count: 150, aggregates: 10 });
      await eventually('four marks taken while the reader is paused', async () =>
        taken >= 4 ? true : undefined,
      );
      expect(marked).toBe(0);
    } finally {
      process.kill(paused, 'SIGCONT');
    }
    await eventually(
      'every row marked published',
      async () => {
        const [row] = await queryOnce<{ pending: number }>(
          db.url,
          `select count(*)::int as pending from outbox where status <> 'published'`,
        );
        return row?.pending === 0 ? true : undefined;
      },
      60_000,
    );
    expect(marked).toBe(150);
    // One mark a confirmation would mark one per tick.
    expect(Math.max(...marksInTick.values())).toBeGreaterThanOrEqual(2);
  });
});
