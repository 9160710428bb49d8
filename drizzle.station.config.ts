import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/station/db/schema.ts',
  out: './migrations/station',
});
