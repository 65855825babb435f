import type { Scenario } from '../scenario.ts';
import { awaitConnectorsRunning } from './support.ts';

export const cdcPostgresRestart: Scenario = {
  name: 'cdc-postgres-restart',
  breaks:
    'CDC mode: PostgreSQL (a private server, wal_level=logical) restarted twice with `pg_ctl restart -m immediate`; ' +
    'the connectors lose their replication connections',
  expectation:
    'The replication slots survive the crash (they are on disk, at their last confirmed position); the connectors ' +
    'reconnect and stream again from there; the API answers 503 meanwhile and the client retries with the same key.',
  needs: { privatePostgres: true, cdc: true },
  inject: async (context) => {
    const postgres = context.postgres;
    if (!postgres) throw new Error('needs.privatePostgres');
    for (const at of [4_000, 10_000]) {
      await context.sleep(Math.max(0, at - context.elapsed()));
      context.fault('pg_ctl restart -m immediate');
      await postgres.restartImmediately();
      context.restored('PostgreSQL accepting connections');
    }
    await awaitConnectorsRunning(context);
  },
};
