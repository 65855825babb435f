import { fileURLToPath } from 'node:url';

/** The outbox and processed_events tables: every service database applies these first. */
export const sharedMigrations = {
  dir: fileURLToPath(new URL('../migrations', import.meta.url)),
  table: 'shared_migrations',
};
