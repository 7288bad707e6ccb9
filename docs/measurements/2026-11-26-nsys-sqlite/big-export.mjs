// Builds a synthetic nsys export of N kernels, each with its cudaLaunchKernel runtime call, N/1000 NVTX steps, then
// times `parseTraceFile` + `analyzeTraces` on it and prints peak RSS. Run from the repository root after
// `npx tsc -p tsconfig.json`: node docs/measurements/2026-11-26-nsys-sqlite/big-export.mjs 1000000
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const n = Number(process.argv[2] ?? 1000000);
const require = createRequire(import.meta.url);
const initSqlJs = require('sql.js/dist/sql-wasm.js');
const SQL = await initSqlJs({ wasmBinary: readFileSync(require.resolve('sql.js/dist/sql-wasm.wasm')) });
const db = new SQL.Database();
db.run('CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)');
db.run("INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'gemm'), (3, 'ProfilerStep')");
db.run('CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL)');
db.run('CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL)');
db.run('CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT, globalTid INTEGER, textId INTEGER)');
db.run('BEGIN');
const kernel = db.prepare('INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 1, 13, ?, ?, 2, 2)');
const call = db.prepare('INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, 1, 0)');
const pid = 0x1000000 * 4242;
for (let i = 0; i < n; i += 1) {
  call.run([i * 10000, i * 10000 + 2000, pid + 4242, i + 1]);
  kernel.run([i * 10000 + 3000, i * 10000 + 9000, i + 1, pid]);
}
const step = db.prepare('INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, ?, ?, NULL)');
for (let s = 0; s < n / 1000; s += 1) step.run([s * 1000 * 10000, (s + 1) * 1000 * 10000, `ProfilerStep#${s}`, pid + 4242]);
db.run('COMMIT');
const file = join(tmpdir(), `nsys-big-${n}.sqlite`);
writeFileSync(file, db.export());
db.close();
const { parseTraceFile } = await import(join(process.cwd(), 'dist/src/analyze/parse.js'));
const { analyzeTraces } = await import(join(process.cwd(), 'dist/src/analyze/analyze.js'));
const t0 = performance.now();
const trace = parseTraceFile(file);
const t1 = performance.now();
const document = analyzeTraces([trace], { rates: null, toolVersion: 'measure' });
const t2 = performance.now();
console.log(
  JSON.stringify({
    kernels: n,
    fileMiB: +(statSync(file).size / 2 ** 20).toFixed(1),
    parseS: +((t1 - t0) / 1000).toFixed(2),
    analyseS: +((t2 - t1) / 1000).toFixed(2),
    steps: document.devices[0].steps.length,
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
);
