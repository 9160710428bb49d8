import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'sqlite',
  schema: './src/scout/db/schema.ts',
  out: './migrations/scout',
});
