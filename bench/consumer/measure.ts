/**
 * One measurement: empty what the variant writes, start its loop, wait until it handled N
 * messages, stop it, and check that every event left exactly one effect.
 */
import { type CpuReport, cpuSince, cpuSnapshot } from '../support/cpu.ts';
import { freshName } from '../support/kafka.ts';
import { readStatements, resetStatements, type StatementStats } from '../support/statements.ts';
import { round, type TimedCell, timed } from '../support/stats.ts';
import { checkServiceEffects, type Fixture, progress, resetSql, type ServiceDatabase } from './fixture.ts';
import { startLoop, type Tally } from './loops.ts';
import type { Variant } from './params.ts';

export type Measurement = TimedCell & {
  /** Transactions committed (DB variants) and kafkajs batches seen (eachBatch variants). */
  transactions: number;
  batches: number;
  meanBatchSize: number;
  cpu: CpuReport;
  /** I and B: pg_stat_statements of the service database over the measurement. */
  statements?: StatementStats[];
};

export async function measure(
  fixture: Fixture,
  variant: Variant,
  events: number,
  roundIndex: number,
): Promise<Measurement> {
  await fixture.admin.query('truncate processed_events, bench_effects');
  const service = variant.key === 'I' ? fixture.inventory : variant.key === 'B' ? fixture.billing : undefined;
  if (service) {
    await service.admin.query(resetSql[variant.key] as string);
    if (fixture.statements) await resetStatements(fixture.statements, service.db.name);
  }
  const groupId = freshName(`consumer-${variant.key.toLowerCase()}`);
  const tally: Tally = { track: progress(events), transactions: 0, batches: 0, batchMessages: 0 };
  const groups = { broker: [fixture.brokerPid] };
  const cpu0 = cpuSnapshot(groups);
  const stop = await startLoop({ fixture, variant, events, groupId, tally, ...(service ? { service } : {}) });

  // A loop that handles nothing for 300 s measures nothing: fail rather than wait for ever.
  let timeout: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    let seen = -1;
    const check = () => {
      if (tally.track.count === seen)
        reject(new Error(`${variant.key}: no progress in 300 s, ${events - seen} messages to go`));
      seen = tally.track.count;
      timeout = setTimeout(check, 300_000);
    };
    check();
  });
  try {
    await Promise.race([tally.track.done, stalled]);
  } finally {
    clearTimeout(timeout);
    await stop();
  }
  const cpu = cpuSince(cpu0, groups);
  const statements =
    service && fixture.statements ? await readStatements(fixture.statements, service.db.name) : undefined;
  await checkEffects(fixture, variant, events, service);
  const elapsedMs = tally.track.elapsedMs();
  return {
    round: roundIndex,
    variant: variant.key,
    ...timed(events, elapsedMs),
    transactions: tally.transactions,
    batches: tally.batches,
    meanBatchSize: round(tally.batches > 0 ? tally.batchMessages / tally.batches : Number.NaN, 1),
    cpu,
    ...(statements ? { statements } : {}),
  };
}

/** A measurement that lost or doubled an effect measured nothing: refuse it. */
async function checkEffects(
  fixture: Fixture,
  variant: Variant,
  events: number,
  service: ServiceDatabase | undefined,
): Promise<void> {
  if (service) {
    await checkServiceEffects(service.admin, variant.key as 'I' | 'B', events, variant.key);
  } else if (variant.key !== 'A' && variant.key !== 'V') {
    const { rows } = await fixture.admin.query<{ processed: number; effects: number }>(
      'select (select count(*) from processed_events)::int as processed, (select count(*) from bench_effects)::int as effects',
    );
    const counts = rows[0];
    // A chunk may overshoot the target by less than its size; what matters is one effect per record.
    if (!counts || counts.processed < events || counts.effects !== counts.processed)
      throw new Error(
        `${variant.key}: ${counts?.processed} processed, ${counts?.effects} effects, expected ${events}`,
      );
  }
}
