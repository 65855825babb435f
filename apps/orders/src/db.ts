import { fileURLToPath } from 'node:url';
import { sharedMigrations } from '@outbox/events';
import { migrateDatabase } from '@outbox/service/migrate';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient, type Prisma as PrismaTypes } from './generated/prisma/client.ts';

export type Prisma = InstanceType<typeof PrismaClient>;
/** The client an interactive transaction hands to its callback. */
export type Tx = PrismaTypes.TransactionClient;

export function createPrisma(databaseUrl: string): Prisma {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
}

const ordersMigrations = {
  dir: fileURLToPath(new URL('../migrations', import.meta.url)),
  table: 'service_migrations',
};

/** Create the orders database if needed and apply the shared outbox migrations, then the orders ones. */
export function migrate(databaseUrl: string): Promise<string[]> {
  return migrateDatabase(databaseUrl, [sharedMigrations, ordersMigrations]);
}
