// `npm run migrate -w @outbox/inventory`: apply migrations without starting the API (deploy step).
import { loadConfigOrExit } from '@outbox/runtime/config';
import { configSchema } from './config.ts';
import { migrate } from './db.ts';

const config = loadConfigOrExit('inventory', configSchema);
const applied = await migrate(config.DATABASE_URL);
console.log(applied.length ? `applied: ${applied.join(', ')}` : 'inventory database is up to date');
