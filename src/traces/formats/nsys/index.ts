import type { FileFormat } from '../format.js';
import { isSqliteFile } from './sniff.js';

/** The largest export read: sql.js holds the whole database in memory. */
export const MAX_SQLITE_BYTES = 1024 * 1024 * 1024;

const limited = (limit: { readonly maxBytes: number }) => ({ maxBytes: Math.min(limit.maxBytes, MAX_SQLITE_BYTES) });

/** Nsight Systems SQLite exports (`nsys export --type sqlite`), told by SQLite's magic bytes whatever their name. */
export const nsys: FileFormat = {
  id: 'nsys',
  container: 'file',
  words: { name: 'an Nsight Systems export', lacks: 'no SQLite header', defaultStream: "the export's own null stream" },
  clock: 'own',
  sniff: (file, limit) => isSqliteFile(file, limited(limit)),
  // sql.js is loaded only when an export is read: a JSON trace, and every other command, never waits for it.
  parse: async (file, limit) => (await import('./parse.js')).parseNsys(file, limited(limit)),
};
