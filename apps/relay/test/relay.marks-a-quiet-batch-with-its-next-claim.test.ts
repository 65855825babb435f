// At a low steady rate every batch holds an event or two, and each cost a claim and a mark: two
// statements, two round trips. With RELAY_MARK_WITH_NEXT_CLAIM_MS an idle relay keeps the mark of
// the batch the broker acknowledged for the claim its next wake-up makes, and sends both as one
// statement (claimSql.ts, markAndClaim), as long as batches come within the bound of each other
// (relayOptions.ts, marksWithNextClaim): a lone event is marked at once. A mark whose wake-up does
// not come in time goes alone, and stop() marks what it holds before it returns.
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { insertEvents, outboxRows } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { preparedStatementNames } from '@outbox/outbox';
import { loadConfig } from '@outbox/runtime/config';
import { describe, expect, it } from 'vitest';
import { configSchema, MARK_WITH_NEXT_CLAIM_DEFAULT_MS, markWithNextClaimMs } from '../src/config.ts';
import { marksWithNextClaim } from '../src/engine/relayOptions.ts';
import { type InProcessRelay, startInProcessRelay } from './inProcessRelay.ts';

useLeakGuard();

const brokers = sharedKafkaBrokers();

/** The names of the prepared statements the relay's pool runs, in order (claim, mark, …). */
function recordStatements(setup: InProcessRelay): string[] {
  const names: string[] = [];
  const query = setup.pool.query.bind(setup.pool) as (...args: unknown[]) => unknown;
  (setup.pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const config = args[0] as { name?: string } | string;
    if (typeof config === 'object' && config.name) names.push(config.name);
    return query(...args);
  };
  return names;
}

const statusOf = async (setup: InProcessRelay) => (await outboxRows(setup.db.url)).map((row) => row.status);

describe('an idle relay with RELAY_MARK_WITH_NEXT_CLAIM_MS', () => {
  it('marks each batch with the claim the next NOTIFY makes, in aggregate order, and the last one alone', {
    timeout: 60_000,
  }, async () => {
    // Long enough that each next commit's NOTIFY comes within it on a busy machine.
    const setup = await startInProcessRelay('relay_mark_with_claim', brokers, {
      markWithNextClaimMs: 5_000,
      pollIntervalMs: 60_000,
    });
    try {
      const statements = recordStatements(setup);
      const acked: number[] = [];
      setup.around.after = async (events) => {
        acked.push(events.length);
      };
      await setup.listener.listen();
      setup.relay.start();
      // Three events of one aggregate, each committed once the one before is on the broker: the
      // next event's claim runs while the one before is still in flight, unmarked.
      for (let n = 1; n <= 3; n++) {
        await insertEvents(setup.db.url, { count: 1, aggregates: 1, aggregateIdPrefix: 'quiet-' });
        await eventually(`event ${n} acknowledged`, async () => (acked.length >= n ? true : undefined));
      }
      await eventually('all three published', async () =>
        (await statusOf(setup)).every((status) => status === 'published') ? true : undefined,
      );
      expect(acked).toEqual([1, 1, 1]);
      const count = (name: string) => statements.filter((s) => s === name).length;
      // The first batch came after none: marked at once. The second came within the bound of the
      // first: its mark went with the third's claim. The third's went alone once no wake-up came.
      expect(count(preparedStatementNames.markAndClaim)).toBe(1);
      expect(count(preparedStatementNames.markPublished)).toBe(2);
      expect(statements.at(-1)).toBe(preparedStatementNames.markPublished);
      const marked = await setup.metrics.published.get();
      expect(marked.values.reduce((sum, v) => sum + v.value, 0)).toBe(3);
    } finally {
      await setup.dispose();
    }
  });

  it('does not pipeline a small batch: an event committed while the broker has it is claimed with its mark', {
    timeout: 60_000,
  }, async () => {
    const setup = await startInProcessRelay('relay_mark_with_claim_no_pipeline', brokers, {
      markWithNextClaimMs: 5_000,
      pollIntervalMs: 60_000,
    });
    try {
      const statements = recordStatements(setup);
      const acked: number[] = [];
      setup.around.before = async () => {
        if (acked.length !== 1) return;
        // The third event is committed, and its NOTIFY has arrived, while the broker has the second.
        await insertEvents(setup.db.url, { count: 1, aggregates: 1, aggregateIdPrefix: 'busy-' });
        await eventually('the NOTIFY arrived', async () => (setup.wakeup.pending ? true : undefined));
      };
      setup.around.after = async (events) => {
        acked.push(events.length);
        // The second event, committed once the first is on the broker: its batch comes within
        // the bound of the first's, so it keeps its mark.
        if (acked.length === 1)
          await insertEvents(setup.db.url, { count: 1, aggregates: 1, aggregateIdPrefix: 'busy-' });
      };
      await setup.listener.listen();
      setup.relay.start();
      await insertEvents(setup.db.url, { count: 1, aggregates: 1, aggregateIdPrefix: 'busy-' });
      await eventually('all three published', async () => {
        const statuses = await statusOf(setup);
        return statuses.length === 3 && statuses.every((status) => status === 'published') ? true : undefined;
      });
      expect(acked).toEqual([1, 1, 1]);
      const count = (name: string) => statements.filter((s) => s === name).length;
      // The first batch marked at once (it came after none), the second's mark with the third's
      // claim, the third's alone. Pipelined, the third claim would have run beside the second
      // publish, before its ack, and could not have carried its mark: no claim with a mark.
      expect(count(preparedStatementNames.markAndClaim)).toBe(1);
      expect(count(preparedStatementNames.markPublished)).toBe(2);
    } finally {
      await setup.dispose();
    }
  });

  it('marks the batch it holds when it stops, without waiting for the bound', {
    timeout: 60_000,
  }, async () => {
    const setup = await startInProcessRelay('relay_mark_with_claim_stop', brokers, {
      markWithNextClaimMs: 60_000,
      pollIntervalMs: 60_000,
    });
    try {
      const statements = recordStatements(setup);
      let acked = 0;
      setup.around.after = async () => {
        acked += 1;
      };
      // A first event, marked at once (no batch before it); the second, committed once the relay
      // is idle again, comes within the bound of the first and keeps its mark.
      await insertEvents(setup.db.url, { count: 1, aggregates: 1, aggregateIdPrefix: 'stop-' });
      await setup.listener.listen();
      setup.relay.start();
      await eventually('the first event published', async () =>
        (await statusOf(setup))[0] === 'published' ? true : undefined,
      );
      await insertEvents(setup.db.url, { count: 1, aggregates: 1, aggregateIdPrefix: 'stop-' });
      await eventually('both events acknowledged', async () => (acked === 2 ? true : undefined));
      expect(await statusOf(setup)).toEqual(['published', 'in_flight']);
      const started = performance.now();
      await setup.relay.stop();
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(await statusOf(setup)).toEqual(['published', 'published']);
      expect(statements.at(-1)).toBe(preparedStatementNames.markPublished);
    } finally {
      await setup.dispose();
    }
  });
});

describe('a lone event', () => {
  it('is marked at once, not kept for a claim that no recent batch announces', {
    timeout: 60_000,
  }, async () => {
    // A bound longer than the wait below: a mark kept for the next claim would miss it.
    const setup = await startInProcessRelay('relay_mark_lone_event', brokers, {
      markWithNextClaimMs: 60_000,
      pollIntervalMs: 60_000,
    });
    try {
      const statements = recordStatements(setup);
      await setup.listener.listen();
      setup.relay.start();
      await insertEvents(setup.db.url, { count: 1, aggregates: 1, aggregateIdPrefix: 'lone-' });
      await eventually(
        'the lone event marked published',
        async () => ((await statusOf(setup))[0] === 'published' ? true : undefined),
        20_000,
      );
      expect(statements).not.toContain(preparedStatementNames.markAndClaim);
      expect(statements.at(-1)).toBe(preparedStatementNames.markPublished);
    } finally {
      await setup.dispose();
    }
  });

  it('keeps its mark only when it came within the bound of the batch before (marksWithNextClaim)', () => {
    const options = { id: 'r', batchSize: 10, leaseMs: 30_000, pollIntervalMs: 1000, maxAttempts: 10 };
    expect(marksWithNextClaim({ ...options, markWithNextClaimMs: 100 }, 40)).toBe(true);
    expect(marksWithNextClaim({ ...options, markWithNextClaimMs: 100 }, 100)).toBe(true);
    expect(marksWithNextClaim({ ...options, markWithNextClaimMs: 100 }, 101)).toBe(false);
    expect(marksWithNextClaim({ ...options, markWithNextClaimMs: 100 }, Number.POSITIVE_INFINITY)).toBe(
      false,
    );
    expect(marksWithNextClaim({ ...options, markWithNextClaimMs: 0 }, 0)).toBe(false);
    expect(marksWithNextClaim(options, 0)).toBe(false);
  });
});

describe('RELAY_MARK_WITH_NEXT_CLAIM_MS', () => {
  const env = { DATABASE_URL: testPostgresUrl, KAFKA_BROKERS: '127.0.0.1:9092' };

  it('is 100 ms unless set (a tenth of the lease when that is less), and refuses a value beyond a second or not a whole number', () => {
    const load = (value?: string, lease?: string) =>
      loadConfig('relay', configSchema, {
        ...env,
        ...(value === undefined ? {} : { RELAY_MARK_WITH_NEXT_CLAIM_MS: value }),
        ...(lease === undefined ? {} : { RELAY_LEASE_MS: lease }),
      });
    expect(MARK_WITH_NEXT_CLAIM_DEFAULT_MS).toBe(100);
    expect(markWithNextClaimMs(load())).toBe(100);
    expect(markWithNextClaimMs(load(undefined, '600'))).toBe(60);
    expect(markWithNextClaimMs(load('0'))).toBe(0);
    expect(markWithNextClaimMs(load('250'))).toBe(250);
    for (const bad of ['1001', '-1', '2.5', 'soon'])
      expect(() => load(bad)).toThrow(/RELAY_MARK_WITH_NEXT_CLAIM_MS: /);
  });

  it('refuses a wait above a tenth of RELAY_LEASE_MS: the rows stay leased while their mark waits', () => {
    const load = (mark: string, lease: string) =>
      loadConfig('relay', configSchema, {
        ...env,
        RELAY_MARK_WITH_NEXT_CLAIM_MS: mark,
        RELAY_LEASE_MS: lease,
      });
    expect(load('500', '5000').RELAY_MARK_WITH_NEXT_CLAIM_MS).toBe(500);
    expect(() => load('501', '5000')).toThrow(
      /RELAY_MARK_WITH_NEXT_CLAIM_MS: at most a tenth of RELAY_LEASE_MS/,
    );
    expect(() =>
      loadConfig('relay', configSchema, {
        ...env,
        RELAY_MARK_WITH_NEXT_CLAIM_MS: '100',
        RELAY_LEASE_MS: '999',
      }),
    ).toThrow(/RELAY_MARK_WITH_NEXT_CLAIM_MS: /);
    expect(load('0', '1').RELAY_MARK_WITH_NEXT_CLAIM_MS).toBe(0);
  });
});
