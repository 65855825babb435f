// Operator commands against an outbox database, without a running relay:
//   node apps/relay/src/cli.ts redrive --id <event id> | --type <event type> | --all
//   node apps/relay/src/cli.ts status
// DATABASE_URL names the database (as for the relay itself).
import { parseArgs } from 'node:util';
import { createOutboxStore, type RedriveSelector } from '@outbox/outbox';
import { postgresUrl } from '@outbox/runtime/config';
import pg from 'pg';

const usage = 'usage: relay-cli redrive (--id <event id> | --type <event type> | --all) | status';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { id: { type: 'string' }, type: { type: 'string' }, all: { type: 'boolean' } },
});
const databaseUrl = postgresUrl.safeParse(process.env.DATABASE_URL);
if (!databaseUrl.success) {
  console.error(
    'DATABASE_URL must name the outbox database, e.g. postgresql://postgres@127.0.0.1:5432/orders',
  );
  process.exit(78);
}

function selector(): RedriveSelector {
  const given = [
    values.id && { id: values.id },
    values.type && { eventType: values.type },
    values.all && { all: true as const },
  ];
  const chosen = given.filter((choice): choice is RedriveSelector => Boolean(choice));
  if (chosen.length !== 1 || !chosen[0]) {
    console.error(usage);
    process.exit(64);
  }
  return chosen[0];
}

const pool = new pg.Pool({ connectionString: databaseUrl.data, max: 1 });
const store = createOutboxStore(pool);
try {
  if (positionals[0] === 'redrive') {
    const ids = await store.redrive(selector());
    console.log(
      ids.length ? `re-queued ${ids.length} event(s):\n${ids.join('\n')}` : 'no dead-lettered event matched',
    );
  } else if (positionals[0] === 'status') {
    console.log(JSON.stringify(await store.outboxStats(), null, 2));
  } else {
    console.error(usage);
    process.exitCode = 64;
  }
} finally {
  await pool.end();
}
