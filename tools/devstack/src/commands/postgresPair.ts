import { createInterface } from 'node:readline';
import { type PostgresPair, startPostgresPair } from '../postgresPair.ts';

const usage = `Usage: node tools/devstack/src/cli.ts postgres-pair [--sync]

Starts a PostgreSQL primary and a streaming standby (private clusters under .local/postgres-pair/,
the machine's PostgreSQL 15 binaries), prints the one URL that always reaches the primary, and
reads commands until quit or Ctrl-C, which removes both:
  kill      kill -9 of the primary (and every process of it)
  promote   pg_ctl promote of the standby; the URL then reaches it
  rebuild   a new standby of the current primary
  pause     the standby stops receiving WAL (async only): what is committed now is lost by a failover
  resume    it receives again
  status    ports, and the standby's flush position against the primary's
  quit      remove both`;

/** `postgres-pair`: a primary and standby to fail over by hand (docs/production.md#database-failover). */
export async function postgresPairCommand(args: string[]): Promise<number> {
  if (args.some((arg) => arg !== '--sync')) {
    console.error(usage);
    return 2;
  }
  const pair = await startPostgresPair({
    label: 'cli',
    replication: args.includes('--sync') ? 'sync' : 'async',
  });
  const status = async () => {
    const positions = await pair.positions().catch((err: Error) => ({ error: err.message }));
    console.log({
      url: pair.url,
      replication: pair.replication,
      primary: pair.primary.port,
      standby: pair.standby?.port ?? 'none',
      ...positions,
    });
  };
  const steps: Record<string, (p: PostgresPair) => Promise<void>> = {
    kill: (p) => p.killPrimary(),
    promote: (p) => p.promote(),
    rebuild: (p) => p.rebuildStandby(),
    pause: (p) => p.pauseReceipt(),
    resume: (p) => p.resumeReceipt(),
    status,
  };
  console.log(`${usage}\n`);
  await status();
  const input = createInterface({ input: process.stdin });
  process.once('SIGINT', () => input.close());
  try {
    process.stdout.write('postgres-pair> ');
    for await (const line of input) {
      const command = line.trim();
      if (command === 'quit') break;
      const step = steps[command];
      if (step)
        await step(pair).then(
          () => console.log(`${command}: done`),
          (err: Error) => console.error(err.message),
        );
      else if (command) console.log(`unknown command "${command}"`);
      process.stdout.write('postgres-pair> ');
    }
  } finally {
    input.close();
    await pair.remove();
  }
  return 0;
}
