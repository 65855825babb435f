import type { Scenario } from '../scenario.ts';
import { postgresRestart } from './postgresRestart.ts';
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
  // The polling scenario's fault, then the connectors back to RUNNING.
  inject: async (context) => {
    await postgresRestart.inject(context);
    await awaitConnectorsRunning(context);
  },
};
