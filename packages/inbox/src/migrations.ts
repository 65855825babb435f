import { fileURLToPath } from 'node:url';
import { outboxMigrationsDir } from '@outbox/outbox';

const inboxMigrationsDir = fileURLToPath(new URL('../migrations', import.meta.url));

/**
 * The tables the pattern adds to every service database: the outbox (packages/outbox/migrations)
 * and processed_events (packages/inbox/migrations). Each package owns its SQL, but the files share
 * one numbering and one history table, as they did when they lived in one folder, so databases
 * migrated before the split see nothing new to apply.
 */
export const sharedMigrations = {
  dir: [outboxMigrationsDir, inboxMigrationsDir],
  table: 'shared_migrations',
};
