import {
  type DatabaseTimeouts,
  defaultDatabaseTimeouts,
  poolTimeouts,
  transactionTimeouts,
} from '@outbox/runtime/database-timeouts';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient, type Prisma as PrismaTypes } from '../src/generated/prisma/client.ts';

// The tests read and write inventory's tables through Prisma, with the timeouts a service would have.

export type Prisma = InstanceType<typeof PrismaClient>;
/** The client an interactive transaction hands to its callback. */
export type Tx = PrismaTypes.TransactionClient;
export type { DatabaseTimeouts };

export function createPrisma(
  databaseUrl: string,
  timeouts: DatabaseTimeouts = defaultDatabaseTimeouts,
): Prisma {
  return new PrismaClient({
    adapter: new PrismaPg({ connectionString: databaseUrl, ...poolTimeouts(timeouts) }),
    transactionOptions: transactionTimeouts(timeouts),
  });
}
