import type { Scenario } from '../scenario.ts';

export const postgresRestart: Scenario = {
  name: 'postgres-restart',
  breaks:
    'PostgreSQL (a private server) restarted twice with `pg_ctl restart -m immediate` while everything runs',
  expectation:
    'Every connection drops at once. The API answers 503 and the client retries with the same Idempotency-Key; ' +
    'consumers retry the event in hand (their transaction rolled back); relays back off and reconnect.',
  needs: { privatePostgres: true },
  inject: async (context) => {
    const postgres = context.postgres;
    if (!postgres) throw new Error('needs.privatePostgres');
    for (const at of [4_000, 10_000]) {
      await context.sleep(Math.max(0, at - context.elapsed()));
      context.fault('pg_ctl restart -m immediate');
      await postgres.restartImmediately();
      context.restored('PostgreSQL accepting connections');
    }
  },
};
