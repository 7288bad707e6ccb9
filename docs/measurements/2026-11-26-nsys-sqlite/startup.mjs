// Times the import of src/analyze/sqlite.ts (reading sql-wasm.wasm and sql.js's asynchronous start, awaited at the
// module's top level) in a fresh process. Run from the repository root after `npx tsc -p tsconfig.json`.
import { join } from 'node:path';
const t0 = performance.now();
await import(join(process.cwd(), 'dist/src/analyze/sqlite.js'));
console.log(`sqlite.js import ${(performance.now() - t0).toFixed(1)} ms`);
