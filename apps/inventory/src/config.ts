import { consumerServiceSchema, refuseKillAfterCommitInProduction } from '@outbox/runtime/config';
import type { z } from 'zod';
import { databaseTimeoutSettings, refineDatabaseTimeouts } from './db.ts';

export const configSchema = refuseKillAfterCommitInProduction(
  refineDatabaseTimeouts(
    consumerServiceSchema({ port: 3003, groupId: 'inventory' }).extend(databaseTimeoutSettings),
  ),
);

export type Config = z.output<typeof configSchema>;
