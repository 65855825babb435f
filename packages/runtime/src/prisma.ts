import { PrismaPg } from '@prisma/adapter-pg';
import {
  type DatabaseTimeouts,
  defaultDatabaseTimeouts,
  poolTimeouts,
  transactionTimeouts,
} from './databaseTimeouts.ts';

/**
 * What every app's generated Prisma client is built with (`new PrismaClient(prismaOptions(url))`):
 * node-postgres through the driver adapter, with the shared timeouts, so a database that stops
 * answering fails requests instead of hanging them with their locks held. Orders' API writes
 * through Prisma; inventory's and billing's tests read through it. `poolSize` is the pool's `max`
 * (node-postgres' default, 10, without it): the orders API sizes its admission limit from it.
 */
export function prismaOptions(
  databaseUrl: string,
  timeouts: DatabaseTimeouts = defaultDatabaseTimeouts,
  poolSize?: number,
) {
  return {
    adapter: new PrismaPg({
      connectionString: databaseUrl,
      ...poolTimeouts(timeouts),
      ...(poolSize === undefined ? {} : { max: poolSize }),
    }),
    transactionOptions: transactionTimeouts(timeouts),
  };
}
