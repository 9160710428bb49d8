import { eq } from 'drizzle-orm';
import type { CoreDb, CoreTables } from '../db/core-db.ts';

/** Settings sections kept as JSON objects, one row each. */
export function createSettingsStore(db: CoreDb, { settings }: CoreTables) {
  return {
    async read(section: string): Promise<Record<string, unknown>> {
      const [row] = await db.select().from(settings).where(eq(settings.key, section));
      return row ? (JSON.parse(row.value) as Record<string, unknown>) : {};
    },
    async write(section: string, value: Record<string, unknown>): Promise<void> {
      const text = JSON.stringify(value);
      await db
        .insert(settings)
        .values({ key: section, value: text })
        .onConflictDoUpdate({ target: settings.key, set: { value: text } });
    },
  };
}

export type SettingsStore = ReturnType<typeof createSettingsStore>;
