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
 * and an outbox written faster than that would grow `pending` for ever. Here a mark takes 5 rows and
 * the slot's reader (pg_recvlogical) confirms once a second: 150 rows are marked within a few
 * confirmations, not 30.
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
    if (!setup) throw new Error('no relay');
    const url = setup.db.url;
    await insertEvents(url, { count: 150, aggregates: 10 });
    const started = Date.now();
    await eventually(
      'every row marked published',
      async () => {
        const [row] = await queryOnce<{ pending: number }>(
          url,
          `select count(*)::int as pending from outbox where status <> 'published'`,
        );
        return row?.pending === 0 ? true : undefined;
      },
      60_000,
    );
    const seconds = (Date.now() - started) / 1000;
    console.log(`150 rows marked in ${seconds.toFixed(1)} s, 5 rows a mark`);
    expect(marked).toBe(150);
    // One mark a confirmation (a second) would take 30 s.
    expect(seconds).toBeLessThan(15);
  });
});
