import { logLevel, port, postgresUrl } from '@outbox/service/config';
import { z } from 'zod';

export const configSchema = z.object({
  PORT: port(3001),
  DATABASE_URL: postgresUrl,
  LOG_LEVEL: logLevel,
  /** Apply pending SQL migrations before listening (idempotent; guarded by an advisory lock). */
  MIGRATE_ON_START: z.stringbool().default(true),
});

export type Config = z.output<typeof configSchema>;
