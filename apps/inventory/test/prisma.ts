import type { DatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import { prismaOptions } from '@outbox/runtime/prisma';
import { PrismaClient, type Prisma as PrismaTypes } from '../src/generated/prisma/client.ts';

// The tests read and write inventory's tables through Prisma, with the timeouts a service would have.

export type Prisma = InstanceType<typeof PrismaClient>;
/** The client an interactive transaction hands to its callback. */
export type Tx = PrismaTypes.TransactionClient;
export type { DatabaseTimeouts };

export function createPrisma(databaseUrl: string, timeouts?: DatabaseTimeouts): Prisma {
  return new PrismaClient(prismaOptions(databaseUrl, timeouts));
}
