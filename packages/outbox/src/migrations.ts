import { fileURLToPath } from 'node:url';

/** The outbox table's SQL; applied with processed_events as one set (@outbox/inbox's sharedMigrations). */
export const outboxMigrationsDir = fileURLToPath(new URL('../migrations', import.meta.url));
