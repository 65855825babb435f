import { defineConfig } from 'prisma/config';

// Only `prisma generate` is used: migrations are plain SQL (see ../../docs/migrations.md).
export default defineConfig({
  schema: 'prisma/schema.prisma',
});
