import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import initSqlJs, { type Database, type SqlJsStatic, type SqlValue } from 'sql.js';
import { UsageError } from '../../../errors.js';
import { readRegularBytes } from '../../../files/read.js';
import { type ReadLimit, SQLITE_HINT } from './sniff.js';

// SQLite files, read through sql.js (SQLite compiled to WebAssembly, so nothing native is loaded). Node resolves
// `sql.js` to its dist/sql-wasm.js; the .wasm beside it is read here and handed over, so nothing is fetched or
// looked up at run time. sql.js starts asynchronously, at a cost paid once per process and only when an export is
// read (docs/measurements/2026-11-26-nsys-sqlite/startup.log): JSON traces do not wait for it.

let started: Promise<SqlJsStatic> | undefined;

function sqlJs(): Promise<SqlJsStatic> {
  if (!started) {
    const wasm = readFileSync(createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm'));
    started = initSqlJs({
      wasmBinary: wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer,
    });
  }
  return started;
}

/** One row as the columns asked for, with SQLite's rowid first: messages name the row by it. */
export interface Row {
  readonly rowid: number;
  readonly values: readonly SqlValue[];
}

/** An open SQLite file: its tables and their columns, and its rows, every failure an exit 2 naming the file. */
export interface SqliteFile {
  readonly tables: ReadonlySet<string>;
  columns(table: string): ReadonlySet<string>;
  /** Every row of `table`, the `columns` in that order. */
  rows(table: string, columns: readonly string[]): Row[];
  close(): void;
}

export async function openSqliteFile(file: string, limit: ReadLimit): Promise<SqliteFile> {
  const SQL = await sqlJs();
  const bytes = readRegularBytes(file, { what: 'trace', maxBytes: limit.maxBytes, hint: SQLITE_HINT });
  const corrupt = (error: unknown) =>
    new UsageError(
      `Cannot analyse trace ${file}: its SQLite data is corrupt or truncated (${error instanceof Error ? error.message : String(error)}).`,
      {
        hint: SQLITE_HINT,
      },
    );
  let db: Database;
  try {
    db = new SQL.Database(bytes);
  } catch (error) {
    throw corrupt(error);
  }
  const query = <T>(run: () => T): T => {
    try {
      return run();
    } catch (error) {
      throw corrupt(error);
    }
  };
  const tables = new Set(
    query(() => firstColumn(db, "SELECT name FROM sqlite_master WHERE type = 'table'")).map(String),
  );
  return {
    tables,
    columns: (table) =>
      new Set(query(() => firstColumn(db, `SELECT name FROM pragma_table_info(${quoteText(table)})`)).map(String)),
    rows: (table, columns) =>
      query(() => {
        const statement = db.prepare(
          `SELECT rowid, ${columns.map(quoteName).join(', ')} FROM ${quoteName(table)} ORDER BY rowid`,
        );
        try {
          const rows: Row[] = [];
          while (statement.step()) {
            const [rowid, ...values] = statement.get();
            rows.push({ rowid: Number(rowid), values });
          }
          return rows;
        } finally {
          statement.free();
        }
      }),
    close: () => db.close(),
  };
}

function firstColumn(db: Database, sql: string): SqlValue[] {
  return db.exec(sql)[0]?.values.map((row) => row[0] ?? null) ?? [];
}

/** Table and column names go into SQL as quoted identifiers; they come from our own constants or sqlite_master. */
function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function quoteText(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
