import { UsageError } from '../../../errors.js';
import { SQLITE_HINT } from './sniff.js';
import type { Row, SqliteFile } from './sqlite.js';

// An export's tables read as rows whose every value is checked as it is taken: a table the exporter did not create
// has no rows, and a missing column, a NULL where the schema requires a value, a value of the wrong type or an event
// that ends before it starts is exit 2 naming the file, the table and the row.

const NS_PER_MS = 1e6;

/** One column we read: `required` where the schema declares it NOT NULL and we need it. */
export interface Column {
  readonly name: string;
  readonly required: boolean;
}
export const need = (name: string): Column => ({ name, required: true });
export const may = (name: string): Column => ({ name, required: false });

/** A row of one table, its values checked as they are taken: a failure names the file, the table and the rowid. */
export interface Cells {
  readonly rowid: number;
  int(name: string): number;
  intOrNull(name: string): number | null;
  textOrNull(name: string): string | null;
  /** start and end, in ms; exit 2 where it ends before it starts. */
  span(): { start: number; end: number };
}

/** The checked rows of a table, by its name and the columns read. */
export type TableOf = (name: string, columns: readonly Column[]) => Cells[];
/** The text of the StringIds id that a row's column holds. */
export type TextOf = (row: Cells, table: string, column: string) => string;

/** The rows of `table` (none where the exporter did not create it), each value checked as it is taken. */
export function tableRows(file: string, db: SqliteFile, table: string, columns: readonly Column[]): Cells[] {
  if (!db.tables.has(table)) return [];
  const have = db.columns(table);
  const missing = columns.filter((c) => !have.has(c.name)).map((c) => c.name);
  if (missing.length)
    throw nsysError(file, `table ${table} has no column ${missing.join(', ')}, which the export schema gives it`);
  const index = new Map(columns.map((c, i) => [c.name, i]));
  const required = new Set(columns.filter((c) => c.required).map((c) => c.name));
  return db
    .rows(
      table,
      columns.map((c) => c.name),
    )
    .map((row) => cells(file, table, row, index, required));
}

function cells(
  file: string,
  table: string,
  row: Row,
  index: ReadonlyMap<string, number>,
  required: ReadonlySet<string>,
): Cells {
  const at = (name: string) => row.values[index.get(name) ?? -1] ?? null;
  const fail = (reason: string) => nsysError(file, `${table} row ${row.rowid} ${reason}`);
  const intOrNull = (name: string): number | null => {
    const value = at(name);
    if (value === null) {
      if (required.has(name)) throw fail(`has NULL ${name}, where the export schema requires a value`);
      return null;
    }
    if (typeof value !== 'number' || !Number.isInteger(value))
      throw fail(`has ${name} ${JSON.stringify(typeof value === 'string' ? value : String(value))}, not an integer`);
    return value;
  };
  const int = (name: string): number => {
    const value = intOrNull(name);
    if (value === null) throw fail(`has NULL ${name}, where a value is needed`);
    return value;
  };
  return {
    rowid: row.rowid,
    int,
    intOrNull,
    textOrNull: (name) => {
      const value = at(name);
      return value === null ? null : typeof value === 'string' ? value : String(value);
    },
    span: () => {
      const start = int('start');
      const end = int('end');
      if (end < start) throw fail(`ends before it starts (start ${start} ns, end ${end} ns)`);
      return { start: start / NS_PER_MS, end: end / NS_PER_MS };
    },
  };
}

/** Exit 2 for an export that cannot be read, naming the file and what was wrong. */
export function nsysError(file: string, reason: string): UsageError {
  return new UsageError(`Cannot analyse trace ${file}: ${reason}.`, { hint: SQLITE_HINT });
}
