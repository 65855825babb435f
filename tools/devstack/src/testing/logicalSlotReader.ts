import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { queryOnce } from '../postgresClient.ts';
import { BIN } from '../postgresPair.ts';
import { eventually } from './stack.ts';

export type LogicalSlotReader = {
  /** The process streaming from the slot (a walsender on the server while it runs). */
  readonly pid: number | undefined;
  /** SIGTERM and wait for its exit: the slot stays, unread. */
  stop(): Promise<void>;
};

/**
 * A real reader of a logical replication slot other than Debezium: `pg_recvlogical`, creating the
 * slot (with `test_decoding`) if it does not exist, then streaming it and confirming every position
 * it has read about once a second. The debezium-mode relay reads only the slot and its walsender
 * (apps/relay/src/cdc/cdcConfirmation.ts), so a test of its confirmation can hold the slot with
 * this and see what the relay does with rows nobody streams to Kafka. Resolves once the slot exists
 * and is read, unless `waitForSlot` is false (a test of the slot's creation).
 */
export async function startLogicalSlotReader(
  url: string,
  slot: string,
  options: { waitForSlot?: boolean } = {},
): Promise<LogicalSlotReader> {
  const slotArgs = ['--slot', slot, '--create-slot', '--if-not-exists', '--start', '-P', 'test_decoding'];
  // The changes to stdout (ignored), flushed (-F) and their position confirmed to the server (-s) every second.
  const child: ChildProcess = spawn(
    `${BIN}/pg_recvlogical`,
    ['-d', url, ...slotArgs, '-f', '-', '-s', '1', '-F', '1'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const reader = {
    get pid() {
      return child.pid;
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
  if (options.waitForSlot === false) return reader;
  try {
    await eventually(`pg_recvlogical reading slot ${slot}`, async () => {
      if (child.exitCode !== null) throw new Error(`pg_recvlogical exited: ${stderr.trim()}`);
      return (await slotReadAndConsistent(url, slot)) ? true : undefined;
    });
  } catch (err) {
    await reader.stop();
    throw err;
  }
  return reader;
}

/** The slot is read by a walsender and past its consistent point (its creation is over). */
export async function slotReadAndConsistent(url: string, slot: string): Promise<boolean> {
  const [row] = await queryOnce<{ ready: boolean }>(
    url,
    `select active and confirmed_flush_lsn is not null as ready
       from pg_replication_slots where slot_name = $1`,
    [slot],
  );
  return row?.ready ?? false;
}
