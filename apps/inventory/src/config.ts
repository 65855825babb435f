import { consumerServiceSchema, refuseKillAfterCommitInProduction } from '@outbox/runtime/config';
import { databaseTimeoutSettings, refineDatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import type { z } from 'zod';

export const configSchema = refuseKillAfterCommitInProduction(
  refineDatabaseTimeouts(
    consumerServiceSchema({ port: 3003, groupId: 'inventory' }).extend(databaseTimeoutSettings),
  ),
);

export type Config = z.output<typeof configSchema>;
