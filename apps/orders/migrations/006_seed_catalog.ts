// The demo catalog's products, from the one list (@outbox/contracts' DEMO_CATALOG) the inventory
// migrations, the load generator and the benchmarks read too. 001_orders.sql inserted the same
// rows until this migration existed; on a database it seeded, this adds nothing.
import { DEMO_CATALOG } from '@outbox/contracts';
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    insert into products (sku, name, currency, unit_price_cents)
    select sku, name, currency, "unitPriceCents"
      from jsonb_to_recordset($catalog$${JSON.stringify(DEMO_CATALOG)}$catalog$::jsonb)
        as p (sku text, name text, currency text, "unitPriceCents" bigint)
    on conflict (sku) do nothing`);
}
