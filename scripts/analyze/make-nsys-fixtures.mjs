#!/usr/bin/env node
// Writes test/fixtures/analyze/nsys/*.sqlite: small Nsight Systems exports built with sql.js from NVIDIA's documented
// schema (Nsight Systems Analysis Guide, "SQLite Schema Reference", schema 3.28.1), since nsys cannot make reports on
// our GPU hosts. The first four hold the programs of the Kineto fixtures in test/fixtures/analyze/ (times there in
// µs, here in ns), so that test/unit/analyze-nsys.test.ts can check both readers give the same analysis; the rest
// are NVTX step rules and hostile files. Run: node scripts/analyze/make-nsys-fixtures.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const out = join(root, 'test', 'fixtures', 'analyze', 'nsys');
const require = createRequire(import.meta.url);
const initSqlJs = require('sql.js/dist/sql-wasm.js');
const SQL = await initSqlJs({ wasmBinary: readFileSync(require.resolve('sql.js/dist/sql-wasm.wasm')) });

// The documented columns of each table read (KERNEL's launch-configuration columns after blockZ left out). `!` marks
// NOT NULL; a row that leaves out a NOT NULL column gets 0 there.
const SCHEMA = {
  StringIds: ['id INTEGER! PRIMARY KEY', 'value TEXT!'],
  TARGET_INFO_CUDA_CONTEXT_INFO: [
    'nullStreamId INTEGER!',
    'hwId INTEGER!',
    'vmId INTEGER!',
    'processId INTEGER!',
    'deviceId INTEGER!',
    'contextId INTEGER!',
    'parentContextId INTEGER',
    'isGreenContext INTEGER',
  ],
  CUPTI_ACTIVITY_KIND_KERNEL: [
    'start INTEGER!',
    'end INTEGER!',
    'deviceId INTEGER!',
    'contextId INTEGER!',
    'greenContextId INTEGER',
    'streamId INTEGER!',
    'correlationId INTEGER',
    'globalPid INTEGER',
    'demangledName INTEGER!',
    'shortName INTEGER!',
    'mangledName INTEGER',
    'launchType INTEGER',
    'cacheConfig INTEGER',
    'registersPerThread INTEGER!',
    'gridX INTEGER!',
    'gridY INTEGER!',
    'gridZ INTEGER!',
    'blockX INTEGER!',
    'blockY INTEGER!',
    'blockZ INTEGER!',
  ],
  CUPTI_ACTIVITY_KIND_MEMCPY: [
    'start INTEGER!',
    'end INTEGER!',
    'deviceId INTEGER!',
    'contextId INTEGER!',
    'greenContextId INTEGER',
    'streamId INTEGER!',
    'correlationId INTEGER',
    'globalPid INTEGER',
    'bytes INTEGER!',
    'copyKind INTEGER!',
    'deprecatedSrcId INTEGER',
    'srcKind INTEGER',
    'dstKind INTEGER',
    'srcDeviceId INTEGER',
    'srcContextId INTEGER',
    'dstDeviceId INTEGER',
    'dstContextId INTEGER',
    'migrationCause INTEGER',
    'graphNodeId INTEGER',
    'virtualAddress INTEGER',
    'copyCount INTEGER',
  ],
  CUPTI_ACTIVITY_KIND_MEMSET: [
    'start INTEGER!',
    'end INTEGER!',
    'deviceId INTEGER!',
    'contextId INTEGER!',
    'greenContextId INTEGER',
    'streamId INTEGER!',
    'correlationId INTEGER',
    'globalPid INTEGER',
    'value INTEGER!',
    'bytes INTEGER!',
    'graphNodeId INTEGER',
    'memKind INTEGER',
  ],
  CUPTI_ACTIVITY_KIND_RUNTIME: [
    'start INTEGER!',
    'end INTEGER!',
    'eventClass INTEGER!',
    'globalTid INTEGER',
    'correlationId INTEGER',
    'nameId INTEGER!',
    'returnValue INTEGER!',
    'callchainId INTEGER',
  ],
  CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: [
    'start INTEGER!',
    'end INTEGER!',
    'deviceId INTEGER!',
    'contextId INTEGER!',
    'greenContextId INTEGER',
    'streamId INTEGER!',
    'correlationId INTEGER',
    'globalPid INTEGER',
    'deprecatedSyncType INTEGER',
    'syncType INTEGER!',
    'eventId INTEGER!',
    'eventSyncId INTEGER',
  ],
  NVTX_EVENTS: [
    'start INTEGER!',
    'end INTEGER',
    'eventType INTEGER!',
    'rangeId INTEGER',
    'category INTEGER',
    'color INTEGER',
    'text TEXT',
    'globalTid INTEGER',
    'endGlobalTid INTEGER',
    'textId INTEGER',
    'domainId INTEGER',
    'uint64Value INTEGER',
    'int64Value INTEGER',
    'doubleValue REAL',
    'uint32Value INTEGER',
    'int32Value INTEGER',
    'floatValue REAL',
    'jsonTextId INTEGER',
    'jsonText TEXT',
  ],
  META_DATA_EXPORT: ['name TEXT!', 'value TEXT'],
};

// CUpti_ActivityMemcpyKind, CUpti_ActivityMemoryKind, CUpti_ActivitySynchronizationType, ENUM_NSYS_EVENT_TYPE.
const HTOD = 1;
const DTOH = 2;
const PAGEABLE = 1;
const PINNED = 2;
const DEVICE = 3;
const STREAM_SYNCHRONIZE = 3;
const CONTEXT_SYNCHRONIZE = 4;
const PUSH_POP = 59;
const MARK = 34;
/** A serialized GlobalId: process id in bits 24–47, thread id below (the exporter's examples decode it so). */
const gid = (pid, tid = 0) => pid * 0x1000000 + tid;
const US = 1000;

/** A database as nsys would export it: only the tables that have rows (tables are created lazily). */
function exportOf(tables, { schema = SCHEMA } = {}) {
  const db = new SQL.Database();
  db.run('PRAGMA page_size = 512');
  const ids = new Map();
  const stringId = (value) => {
    if (!ids.has(value)) ids.set(value, ids.size + 1);
    return ids.get(value);
  };
  const resolved = Object.fromEntries(
    Object.entries(tables).map(([table, rows]) => [
      table,
      rows.map((row) =>
        Object.fromEntries(
          Object.entries(row).map(([k, v]) => [k, typeof v === 'object' && v?.string ? stringId(v.string) : v]),
        ),
      ),
    ]),
  );
  resolved.StringIds = [...ids].map(([value, id]) => ({ id, value }));
  resolved.META_DATA_EXPORT = [{ name: 'EXPORT_SCHEMA_VERSION', value: '3.28.1' }];
  for (const [table, rows] of Object.entries(resolved)) {
    const columns = schema[table];
    db.run(`CREATE TABLE ${table} (${columns.map((c) => c.replace('!', '   NOT NULL')).join(', ')})`);
    const names = columns.map((c) => c.split(' ')[0]);
    const notNull = new Set(columns.filter((c) => c.includes('!')).map((c) => c.split(' ')[0]));
    for (const row of rows) {
      const values = names.map((n) => (n in row ? row[n] : notNull.has(n) ? 0 : null));
      db.run(`INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`, values);
    }
  }
  const bytes = db.export();
  db.close();
  return Buffer.from(bytes);
}

const str = (string) => ({ string });
const context = (pid, device, nullStreamId = 7) => ({ nullStreamId, processId: pid, deviceId: device, contextId: 1 });
const launch = (pid, tid, name, startUs, durUs, correlationId) => ({
  start: startUs * US,
  end: (startUs + durUs) * US,
  globalTid: gid(pid, tid),
  correlationId,
  nameId: str(name),
});
const kernel = (pid, device, stream, name, startUs, durUs, correlationId) => ({
  start: startUs * US,
  end: (startUs + durUs) * US,
  deviceId: device,
  contextId: 1,
  streamId: stream,
  correlationId,
  globalPid: gid(pid),
  demangledName: str(name),
  shortName: str(name.split('(')[0]),
  gridX: 1,
  gridY: 1,
  gridZ: 1,
  blockX: 128,
  blockY: 1,
  blockZ: 1,
});
const copy = (pid, device, stream, copyKind, srcKind, dstKind, startUs, durUs, correlationId, bytes) => ({
  start: startUs * US,
  end: (startUs + durUs) * US,
  deviceId: device,
  contextId: 1,
  streamId: stream,
  correlationId,
  globalPid: gid(pid),
  bytes,
  copyKind,
  srcKind,
  dstKind,
});
const range = (pid, tid, text, startUs, durUs, extra = {}) => ({
  start: startUs * US,
  end: durUs === null ? null : (startUs + durUs) * US,
  eventType: PUSH_POP,
  text,
  globalTid: gid(pid, tid),
  ...extra,
});

const fixtures = {
  // copy-overlapped.json: H2D and D2H on streams of their own, partly under the kernels of stream 13.
  'copy-overlapped.sqlite': exportOf({
    TARGET_INFO_CUDA_CONTEXT_INFO: [context(100, 0)],
    NVTX_EVENTS: [range(100, 100, 'ProfilerStep#1', 1000, 1120)],
    CUPTI_ACTIVITY_KIND_RUNTIME: [
      launch(100, 100, 'cudaMemcpyAsync_v3020', 1010, 5, 1),
      launch(100, 100, 'cudaLaunchKernel_v7000', 1020, 5, 2),
      launch(100, 100, 'cudaMemcpyAsync_v3020', 1030, 5, 3),
      launch(100, 100, 'cudaMemcpyAsync_v3020', 1040, 5, 4),
      launch(100, 100, 'cudaLaunchKernel_v7000', 1050, 5, 5),
      launch(100, 100, 'cudaMemcpyAsync_v3020', 1060, 5, 6),
      launch(100, 100, 'cudaDeviceSynchronize_v3020', 1070, 1035, 7),
    ],
    CUPTI_ACTIVITY_KIND_MEMCPY: [
      copy(100, 0, 14, HTOD, PINNED, DEVICE, 1100, 200, 1, 4000000),
      copy(100, 0, 14, HTOD, PINNED, DEVICE, 1300, 200, 3, 4000000),
      copy(100, 0, 15, DTOH, DEVICE, PINNED, 1700, 100, 4, 2000000),
      copy(100, 0, 15, DTOH, DEVICE, PINNED, 2000, 100, 6, 2000000),
    ],
    CUPTI_ACTIVITY_KIND_KERNEL: [
      kernel(100, 0, 13, 'gemm_a', 1300, 400, 2),
      kernel(100, 0, 13, 'gemm_b', 1700, 300, 5),
    ],
  }),
  // pageable-compute-stream.json: a pageable H2D and a D2H on the kernels' stream, which is the context's null stream.
  'pageable-compute-stream.sqlite': exportOf({
    TARGET_INFO_CUDA_CONTEXT_INFO: [context(200, 0, 7)],
    NVTX_EVENTS: [range(200, 200, 'ProfilerStep#4', 1800, 1500)],
    CUPTI_ACTIVITY_KIND_RUNTIME: [
      launch(200, 200, 'cudaMemcpyAsync_v3020', 1900, 5, 11),
      launch(200, 200, 'cudaLaunchKernel_v7000', 1910, 5, 12),
      launch(200, 200, 'cudaLaunchKernel_v7000', 1920, 5, 13),
      launch(200, 200, 'cudaMemcpyAsync_v3020', 1930, 5, 14),
    ],
    CUPTI_ACTIVITY_KIND_MEMCPY: [
      copy(200, 0, 7, HTOD, PAGEABLE, DEVICE, 2000, 500, 11, 5000000),
      copy(200, 0, 7, DTOH, DEVICE, PINNED, 3080, 100, 14, 1000000),
    ],
    CUPTI_ACTIVITY_KIND_KERNEL: [
      kernel(200, 0, 7, 'relu_kernel', 2510, 400, 12),
      kernel(200, 0, 7, 'softmax_kernel', 2920, 150, 13),
    ],
  }),
  // host-sync.json: a stream synchronize in the middle of the step; CUPTI's synchronization records repeat both
  // synchronizes under the runtime calls' correlation ids, as nsys exports them, and must not count twice.
  'host-sync.sqlite': exportOf({
    TARGET_INFO_CUDA_CONTEXT_INFO: [context(400, 0)],
    NVTX_EVENTS: [range(400, 400, 'ProfilerStep#2', 0, 5000)],
    CUPTI_ACTIVITY_KIND_RUNTIME: [
      launch(400, 400, 'cudaLaunchKernel_v7000', 100, 10, 1),
      launch(400, 400, 'cudaStreamSynchronize_v3020', 120, 590, 2),
      launch(400, 400, 'cudaLaunchKernel_v7000', 1700, 10, 3),
      launch(400, 400, 'cudaLaunchKernel_v7000', 1720, 10, 4),
      launch(400, 400, 'cudaDeviceSynchronize_v3020', 1740, 990, 5),
    ],
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: [
      {
        start: 120 * US,
        end: 710 * US,
        deviceId: 0,
        contextId: 1,
        streamId: 13,
        correlationId: 2,
        globalPid: gid(400),
        syncType: STREAM_SYNCHRONIZE,
      },
      {
        start: 1740 * US,
        end: 2730 * US,
        deviceId: 0,
        contextId: 1,
        streamId: 0,
        correlationId: 5,
        globalPid: gid(400),
        syncType: CONTEXT_SYNCHRONIZE,
      },
    ],
    CUPTI_ACTIVITY_KIND_KERNEL: [
      kernel(400, 0, 13, 'loss_kernel', 200, 500, 1),
      kernel(400, 0, 13, 'backward_kernel', 1720, 500, 3),
      kernel(400, 0, 13, 'optimizer_kernel', 2220, 500, 4),
    ],
  }),
  // ddp-nccl.json: device 1, an NCCL all-reduce partly under the backward kernels in step 0 and exposed in step 1;
  // the NCCL kernels are launched from a second thread.
  'ddp-nccl.sqlite': exportOf({
    TARGET_INFO_CUDA_CONTEXT_INFO: [context(300, 1)],
    NVTX_EVENTS: [range(300, 300, 'ProfilerStep#0', 100, 900), range(300, 300, 'ProfilerStep#1', 2300, 100)],
    CUPTI_ACTIVITY_KIND_RUNTIME: [
      launch(300, 300, 'cudaLaunchKernel_v7000', 200, 5, 1),
      launch(300, 300, 'cudaLaunchKernel_v7000', 300, 5, 2),
      launch(300, 301, 'cudaLaunchKernelExC_v11060', 400, 5, 3),
      launch(300, 300, 'cudaLaunchKernel_v7000', 2310, 5, 4),
      launch(300, 301, 'cudaLaunchKernelExC_v11060', 2320, 5, 5),
    ],
    CUPTI_ACTIVITY_KIND_KERNEL: [
      kernel(300, 1, 20, 'ncclKernel_AllReduce_RING_LL_Sum_float', 3500, 400, 5),
      kernel(300, 1, 13, 'conv_bwd_weight', 1000, 600, 1),
      kernel(300, 1, 13, 'conv_bwd_data', 1600, 400, 2),
      kernel(300, 1, 20, 'ncclKernel_AllReduce_RING_LL_Sum_float', 1400, 800, 3),
      kernel(300, 1, 13, 'sgd_update', 3000, 500, 4),
    ],
  }),
  // No ProfilerStep#N: two top-level "train_step" ranges (registered strings, through textId), each holding two
  // nested "forward" ranges, a "setup" range once, a mark and a range still open at the end. A second process (pid
  // 600) on device 1 reuses correlation id 1 for a kernel it launched during setup.
  'nvtx-steps.sqlite': exportOf({
    TARGET_INFO_CUDA_CONTEXT_INFO: [context(500, 0), context(600, 1)],
    NVTX_EVENTS: [
      range(500, 500, 'setup', 0, 100),
      range(500, 500, null, 100, 300, { textId: str('train_step') }),
      range(500, 500, null, 110, 50, { textId: str('forward') }),
      range(500, 500, null, 200, 50, { textId: str('forward') }),
      { start: 150 * US, end: null, eventType: MARK, text: 'train_step', globalTid: gid(500, 500) },
      range(500, 500, null, 400, 300, { textId: str('train_step') }),
      range(500, 500, null, 410, 50, { textId: str('forward') }),
      range(500, 500, null, 500, 50, { textId: str('forward') }),
      range(500, 500, 'epoch', 800, null),
    ],
    CUPTI_ACTIVITY_KIND_RUNTIME: [
      launch(600, 600, 'cudaLaunchKernel_v7000', 50, 5, 1),
      launch(500, 500, 'cudaLaunchKernel_v7000', 120, 5, 1),
      launch(500, 500, 'cudaLaunchKernel_v7000', 420, 5, 2),
    ],
    CUPTI_ACTIVITY_KIND_KERNEL: [
      kernel(600, 1, 13, 'other_process_kernel', 60, 600, 1),
      kernel(500, 0, 13, 'step_kernel', 150, 200, 1),
      kernel(500, 0, 13, 'step_kernel', 450, 100, 2),
    ],
  }),
};

// An export of a run traced without CUDA (only NVTX): no GPU tables, which is nothing to analyse, not an error.
fixtures['no-cuda.sqlite'] = exportOf({
  NVTX_EVENTS: [range(800, 800, 'step', 0, 100), range(800, 800, 'step', 100, 100)],
});

// Hostile files: each must be exit 2 naming the file and the table.
const withoutColumn = (table, column) => ({
  ...SCHEMA,
  [table]: SCHEMA[table].filter((c) => !c.startsWith(`${column} `)),
});
const nullable = (table, column) => ({
  ...SCHEMA,
  [table]: SCHEMA[table].map((c) => (c.startsWith(`${column} `) ? c.replace('!', '') : c)),
});
const oneKernel = (row = {}) => ({ CUPTI_ACTIVITY_KIND_KERNEL: [{ ...kernel(700, 0, 13, 'k', 100, 10, 1), ...row }] });
fixtures['hostile-missing-column.sqlite'] = exportOf(oneKernel(), {
  schema: withoutColumn('CUPTI_ACTIVITY_KIND_KERNEL', 'streamId'),
});
fixtures['hostile-null-start.sqlite'] = exportOf(
  {
    CUPTI_ACTIVITY_KIND_KERNEL: [
      kernel(700, 0, 13, 'k', 100, 10, 1),
      { ...kernel(700, 0, 13, 'k', 200, 10, 2), start: null },
    ],
  },
  { schema: nullable('CUPTI_ACTIVITY_KIND_KERNEL', 'start') },
);
fixtures['hostile-negative-duration.sqlite'] = exportOf({
  CUPTI_ACTIVITY_KIND_MEMCPY: [
    copy(700, 0, 14, HTOD, PINNED, DEVICE, 500, 10, 1, 100),
    { ...copy(700, 0, 14, HTOD, PINNED, DEVICE, 600, 10, 2, 100), end: 590 * US },
  ],
});
{
  const db = new SQL.Database();
  db.run('PRAGMA page_size = 512');
  db.run('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)');
  db.run("INSERT INTO users (name) VALUES ('ada')");
  fixtures['hostile-not-nsys.sqlite'] = Buffer.from(db.export());
  db.close();
}
{
  // A database whose header is written but that holds no table: user_version makes SQLite write page 1.
  const db = new SQL.Database();
  db.run('PRAGMA page_size = 512');
  db.run('PRAGMA user_version = 1');
  fixtures['hostile-empty.sqlite'] = Buffer.from(db.export());
  db.close();
}
{
  // The first half of an export: the header and schema survive, the pages the rows were on do not.
  const whole = fixtures['copy-overlapped.sqlite'];
  fixtures['hostile-truncated.sqlite'] = whole.subarray(0, Math.floor(whole.length / 2));
}

for (const [name, bytes] of Object.entries(fixtures)) {
  writeFileSync(join(out, name), bytes);
  process.stdout.write(`${name} ${bytes.length} bytes\n`);
}
