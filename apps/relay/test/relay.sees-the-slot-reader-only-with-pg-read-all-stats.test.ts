import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually } from '@outbox/devstack/testing/stack';
import { queryOnce, testPostgresUrl } from '@outbox/devstack/testing/test-database';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readReplicationSlot } from '../src/cdc/replicationSlot.ts';

/**
 * In debezium mode the relay marks a row published only once the connector's reader has confirmed
 * it, and it knows that reader by its session in pg_stat_activity, which PostgreSQL shows to
 * another role only with pg_read_all_stats. Without it the relay marks nothing while the slot looks
 * healthy; readerVisible is what lets /healthz say so (cdcHealth.ts). The reader here is a real
 * one: pg_recvlogical streaming from a real slot as the superuser, as Debezium streams as its own role.
 */

useLeakGuard();

const suffix = randomBytes(3).toString('hex');
const slot = `relay_reader_${suffix}`;
const role = `relay_reader_${suffix}`;
let reader: ChildProcess | undefined;
let pool: pg.Pool;

beforeAll(async () => {
  await queryOnce(testPostgresUrl, `create role ${role} login`);
  await queryOnce(testPostgresUrl, `select pg_create_logical_replication_slot($1, 'test_decoding')`, [slot]);
  reader = spawn(
    '/usr/lib/postgresql/15/bin/pg_recvlogical',
    [
      `--dbname=${testPostgresUrl}`,
      `--slot=${slot}`,
      '--start',
      '--file=/dev/null',
      '--no-loop',
      '--status-interval=1',
    ],
    { stdio: 'ignore' },
  );
  const asRole = new URL(testPostgresUrl);
  asRole.username = role;
  asRole.password = '';
  pool = new pg.Pool({ connectionString: asRole.toString(), max: 1 });
  await eventually(
    'pg_recvlogical streams from the slot',
    async () => ((await readReplicationSlot(pool, slot))?.active ? true : undefined),
    15_000,
  );
});

afterAll(async () => {
  const exited = new Promise((resolve) =>
    reader?.exitCode !== null ? resolve(null) : reader.once('exit', resolve),
  );
  reader?.kill();
  await exited;
  await pool?.end();
  // The slot can be dropped once its walsender has gone, which may take a moment after the exit.
  await eventually(
    'the slot is dropped',
    async () =>
      (
        await queryOnce(
          testPostgresUrl,
          'select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1 and not active',
          [slot],
        ).then(() =>
          queryOnce<{ n: number }>(
            testPostgresUrl,
            'select count(*)::int as n from pg_replication_slots where slot_name = $1',
            [slot],
          ),
        )
      )[0]?.n === 0
        ? true
        : undefined,
    10_000,
  );
  await queryOnce(testPostgresUrl, `drop role if exists ${role}`);
});

describe('the replication slot as the relay reads it', () => {
  it('says the reader is not visible to a role without pg_read_all_stats', async () => {
    const read = await readReplicationSlot(pool, slot);
    expect(read).toMatchObject({ active: true, readerVisible: false });
  });

  it('sees the reader once the role is granted pg_read_all_stats', async () => {
    await queryOnce(testPostgresUrl, `grant pg_read_all_stats to ${role}`);
    const read = await readReplicationSlot(pool, slot);
    expect(read).toMatchObject({ active: true, readerVisible: true });
  });
});
