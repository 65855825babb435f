// Stock for the demo catalog (@outbox/contracts' DEMO_CATALOG, the list the orders migrations seed
// products from). 001_inventory.sql inserted the same rows until this migration existed; on a
// database it seeded, this adds nothing.
import { DEMO_CATALOG } from '@outbox/contracts';
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    insert into stock (sku, available)
    select sku, "seededStock"
      from jsonb_to_recordset($catalog$${JSON.stringify(DEMO_CATALOG)}$catalog$::jsonb)
        as p (sku text, "seededStock" integer)
    on conflict (sku) do nothing`);
}
