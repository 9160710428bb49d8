import { count } from 'drizzle-orm';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import type { StationDb } from './open.ts';
import * as schema from './schema.ts';

const BATCH_ROWS = 500;

/** The Station's tables, every table before the tables that reference it. */
export function tablesInCopyOrder(): PgTable[] {
  const tables = Object.values(schema) as PgTable[];
  const ordered: PgTable[] = [];
  const visit = (table: PgTable, path: Set<PgTable>) => {
    if (ordered.includes(table)) return;
    if (path.has(table)) throw new Error(`foreign keys form a cycle at ${getTableConfig(table).name}`);
    path.add(table);
    for (const fk of getTableConfig(table).foreignKeys) {
      const parent = fk.reference().foreignTable;
      if (parent !== table) visit(parent, path);
    }
    path.delete(table);
    ordered.push(table);
  };
  for (const table of tables) visit(table, new Set());
  return ordered;
}

/** Columns that order a table's rows completely: its primary key, else every column. */
function orderColumns(table: PgTable) {
  const config = getTableConfig(table);
  const primary = config.columns.filter((column) => column.primary);
  if (primary.length > 0) return primary;
  const composite = config.primaryKeys[0]?.columns;
  return composite && composite.length > 0 ? composite : config.columns;
}

export interface TableCopy {
  table: string;
  rows: number;
}

async function rowCount(db: StationDb, table: PgTable): Promise<number> {
  const [row] = await db.select({ n: count() }).from(table);
  return Number(row?.n ?? 0);
}

/** Tables of `db` that hold rows (a database to move into must have none). */
export async function nonEmptyTables(db: StationDb): Promise<TableCopy[]> {
  const found: TableCopy[] = [];
  for (const table of tablesInCopyOrder()) {
    const rows = await rowCount(db, table);
    if (rows > 0) found.push({ table: getTableConfig(table).name, rows });
  }
  return found;
}

/**
 * Copies every row of every Station table from `source` to `target` in one transaction on
 * the target (all or nothing), parents before children, in batches; then checks the counts.
 */
export async function copyStationTables(
  source: StationDb,
  target: StationDb,
  onTable: (copy: TableCopy) => void = () => {},
): Promise<TableCopy[]> {
  const copies: TableCopy[] = [];
  await target.transaction(async (tx) => {
    for (const table of tablesInCopyOrder()) {
      // A batch at a time in a stable order (the Station is stopped: nothing moves meanwhile),
      // so a large snapshot index is never held in memory at once.
      const order = orderColumns(table);
      let read = 0;
      for (;;) {
        const batch = await source
          .select()
          .from(table)
          .orderBy(...order)
          .limit(BATCH_ROWS)
          .offset(read);
        if (batch.length === 0) break;
        await tx.insert(table).values(batch);
        read += batch.length;
      }
      const copied = await rowCount(tx as unknown as StationDb, table);
      const name = getTableConfig(table).name;
      if (copied !== read) throw new Error(`${name}: copied ${copied} of ${read} rows`);
      const copy = { table: name, rows: read };
      copies.push(copy);
      onTable(copy);
    }
  });
  return copies;
}
