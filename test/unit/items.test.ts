import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { configHash } from '../../src/config/hash.js';
import { parseConfigText } from '../../src/config/load.js';
import type { ConfigBuffer } from '../../src/config/types.js';
import { compareWithin, POISON } from '../../src/data/compare.js';
import { fillPattern, fromBfloat16Bits, fromHalfBits, toBfloat16Bits } from '../../src/data/patterns.js';
import { UsageError } from '../../src/errors.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { type DeviceParts, layoutBound } from '../../src/measure/bound.js';
import { compareWindows } from '../../src/measure/repeat.js';
import { buildPlan } from '../../src/plan/build.js';
import { chunkArgs, launchElements } from '../../src/plan/kernel-args.js';
import { gridSize } from '../../src/exec/kernel-launch.js';
import type { CopyOp } from '../../src/kinds/copy/index.js';
import type { KernelOp } from '../../src/kinds/kernel/index.js';
import type { Plan, Schedule } from '../../src/plan/types.js';
import { renderRunTable } from '../../src/report/exporters/table.js';

import { renderPlan } from '../../src/report/plan.js';
import { makeStyle } from '../../src/report/style.js';
import { RunResultSchema } from '../../src/result/schema.js';
import { outBuffer } from '../helpers/config-buffer.js';
import { makeResult } from '../helpers/results.js';

/** Facts, not layout, are checked here: the whole text, on lines no terminal width folds. */
const WIDE = { columns: 1000, verbose: true };

// row_sum.cu: in (itemSize rows) + a resident table → out (one float per row).
const itemsConfig = (
  options: {
    items?: number | string;
    inItem?: number;
    outItem?: number;
    extra?: string;
    pipeline?: string;
    top?: string;
  } = {},
) =>
  `${options.top ?? ''}buffers:\n` +
  `  in: { type: float32, itemSize: ${options.inItem ?? 256}, role: in }\n` +
  '  table: { type: float32, count: 256, role: resident }\n' +
  `  out: { type: float32, itemSize: ${options.outItem ?? 1}, role: out }\n${options.extra ?? ''}` +
  'kernels:\n  - { source: row_sum.cu, entry: row_sum, args: [{ buffer: in }, { buffer: table }, { buffer: out }, { chunk: items }, { int32: 256 }] }\n' +
  `pipeline: { items: ${options.items ?? 1000}, chunks: 4, streams: 2${options.pipeline ?? ''} }\n`;

function plan(text: string): Plan {
  const { config, locate } = parseConfigText(text, '/tmp/items.yaml');
  return buildPlan(config, resolveKernels(config, locate));
}

const configError = (text: string): string => {
  try {
    parseConfigText(text, '/tmp/items.yaml');
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    return error.message;
  }
  assert.fail('the config was accepted');
};

const byRole = (p: Plan, kind: string): Schedule => {
  const s = p.schedules.find((x) => x.role.kind === kind);
  assert.ok(s, `no ${kind} schedule`);
  return s;
};
const copies = (s: Schedule, buffer: string) =>
  s.body.filter((o): o is CopyOp => o.kind === 'copy' && o.buffer === buffer);

describe('pipeline.items: chunks over items, each buffer by its own itemSize', () => {
  it('reads every chunked buffer as items × itemSize elements and keeps the resident one as given', () => {
    const { config } = parseConfigText(itemsConfig(), '/tmp/items.yaml');
    assert.equal(config.elements, 1000);
    assert.equal(config.items, 1000);
    assert.deepEqual(
      config.buffers.map((b) => [b.name, b.elements, b.itemSize, b.bytes]),
      [
        ['in', 256_000, 256, 1_024_000],
        ['table', 256, 1, 1024],
        ['out', 1000, 1, 4000],
      ],
    );
  });

  it("copies each chunk's rows of the input and one value per row of the output, at each buffer's own offsets", () => {
    const s = byRole(plan(itemsConfig()), 'overlapped');
    assert.deepEqual(
      s.ranges.map((r) => [r.first, r.count]),
      [
        [0, 250],
        [250, 250],
        [500, 250],
        [750, 250],
      ],
    );
    assert.deepEqual(
      copies(s, 'in').map((c) => [c.direction, c.hostOffset, c.deviceOffset, c.bytes]),
      [0, 1, 2, 3].map((i) => ['h2d', i * 256_000, i * 256_000, 256_000]),
    );
    assert.deepEqual(
      copies(s, 'out').map((c) => [c.direction, c.hostOffset, c.deviceOffset, c.bytes]),
      [0, 1, 2, 3].map((i) => ['d2h', i * 1000, i * 1000, 1000]),
    );
    assert.deepEqual(s.bytes, { h2d: 1_024_000, d2h: 4000 });
    const kernels = s.body.filter((o): o is KernelOp => o.kind === 'kernel');
    assert.deepEqual(
      kernels.map((k) => [k.first, k.count, k.deviceFirst]),
      [0, 1, 2, 3].map((i) => [i * 250, 250, i * 250]),
    );
  });

  it('never copies a resident buffer: no mode moves its bytes, and it is on the device whole', () => {
    const p = plan(itemsConfig());
    for (const s of p.schedules) assert.equal(copies(s, 'table').length, 0, s.id);
    const serial = byRole(p, 'serial');
    assert.deepEqual(serial.bytes, { h2d: 1_024_000, d2h: 4000 });
    assert.match(
      renderPlan(p),
      /buffer table: float32 × 256 = 1 KiB, resident, pinned host memory: copied to the device once before timing/,
    );
    assert.match(renderPlan(p), /device memory: .*of which resident 1 KiB/);
    assert.match(renderPlan(p), /layout: 4 chunks of 250 items, 2 streams/);
  });

  it("puts a ring's slots at each buffer's own item offsets, and sizes it with the resident buffers counted", () => {
    // Per item 1028 bytes (256 + 1 floats); 250 items a chunk = 257,000 bytes a slot. A budget of 2 slots plus the
    // 1 KiB table holds two slots; without counting the table it would be just as many, so the table is made large.
    const big = itemsConfig({ pipeline: ', order: depth-first' }).replace(
      'count: 256, role: resident',
      'count: 64250, role: resident',
    );
    const p = plan(`deviceMemory: ${2 * 257_000 + 257_000}\n${big}`);
    assert.deepEqual(p.device.ring, { slots: 2, slotElements: 250 });
    const s = byRole(p, 'overlapped');
    assert.deepEqual(
      copies(s, 'in').map((c) => [c.hostOffset, c.deviceOffset]),
      [0, 1, 2, 3].map((i) => [i * 256_000, (i % 2) * 256_000]),
    );
    assert.deepEqual(
      copies(s, 'out').map((c) => [c.hostOffset, c.deviceOffset]),
      [0, 1, 2, 3].map((i) => [i * 1000, (i % 2) * 1000]),
    );
    assert.equal(p.device.elements, 500);
  });

  it('passes each buffer its own chunk pointer, a resident buffer its base, and items or elements as asked', () => {
    const buffers: Pick<ConfigBuffer, 'name' | 'role' | 'itemSize' | 'elementBytes'>[] = [
      { name: 'x', role: 'in', itemSize: 4096, elementBytes: 2 },
      { name: 'w', role: 'resident', itemSize: 1, elementBytes: 2 },
      { name: 'y', role: 'out', itemSize: 1000, elementBytes: 4 },
    ];
    const op = { first: 512, count: 256, deviceFirst: 128 };
    const args = chunkArgs(
      [
        { kind: 'buffer', buffer: 'w' },
        { kind: 'buffer', buffer: 'x' },
        { kind: 'buffer', buffer: 'y' },
        { kind: 'chunk-items', type: 'int32' },
        { kind: 'chunk-elements', type: 'uint64' },
        { kind: 'chunk-offset', type: 'uint64' },
        { kind: 'scalar', type: 'float32', value: 1.5 },
      ],
      buffers,
      op,
    );
    assert.deepEqual(args, [
      { kind: 'buffer', buffer: 'w', byteOffset: 0 },
      { kind: 'buffer', buffer: 'x', byteOffset: 128 * 4096 * 2 },
      { kind: 'buffer', buffer: 'y', byteOffset: 128 * 1000 * 4 },
      { kind: 'scalar', type: 'int32', value: 256 },
      // Elements and offset count in the first chunked buffer the args name (x), not the resident one before it.
      { kind: 'scalar', type: 'uint64', value: 256 * 4096 },
      { kind: 'scalar', type: 'uint64', value: 512 * 4096 },
      { kind: 'scalar', type: 'float32', value: 1.5 },
    ]);
  });

  it("sizes a launch's grid by the elements of its first chunked buffer, not one thread an item", () => {
    const buffers = [
      { name: 'b', role: 'resident' as const, itemSize: 1 },
      { name: 'h', role: 'scratch' as const, itemSize: 4096 },
    ];
    const args = [
      { kind: 'buffer' as const, buffer: 'b' },
      { kind: 'buffer' as const, buffer: 'h' },
    ];
    assert.equal(launchElements(args, buffers, 512), 512 * 4096);
    assert.equal(
      launchElements([{ kind: 'buffer', buffer: 'b' }], buffers, 512),
      512,
      'a resident buffer alone: one element an item',
    );
    const grid = (count: number) =>
      gridSize({ grid: 'auto', block: 256 }, count, { multiprocessors: 132, maxThreadsPerMultiprocessor: 2048 });
    assert.equal(grid(launchElements(args, buffers, 512)), 132 * 8, 'a chunk of 512 rows of 4,096 fills the GPU');
    assert.equal(grid(512), 2, 'what counting items gave: two blocks for two million values');
  });

  it("keeps the small-copy batches inside a ring's slots, where a buffer's slots hold fewer bytes than a small copy", () => {
    const p = plan(
      'name: t\ndeviceMemory: 2MiB\nbuffers:\n  w: { type: float32, itemSize: 65536, role: in }\n  check: { type: float32, itemSize: 1, role: out }\n' +
        'kernels:\n  - { name: scale, source: scale.cu, entry: scale, args: [{ buffer: w }, { buffer: check }, { chunk: items }, { float32: 2 }] }\n' +
        'pipeline: { items: 16, chunks: 16, slots: 2 }\n',
    );
    const batch = (op: 'h2d' | 'd2h') =>
      p.schedules.find((s) => s.role.kind === 'op-cost' && s.role.op === op)?.body[0] as CopyOp;
    assert.equal(batch('h2d').bytes, 4096);
    assert.equal(batch('d2h').bytes, 8, "two slots of one 4-byte item: the copy stays within the device's 8 bytes");
  });

  it('passes the same values as before items existed to a config without them', () => {
    const args = chunkArgs(
      [
        { kind: 'buffer', buffer: 'x' },
        { kind: 'chunk-elements', type: 'uint64' },
        { kind: 'chunk-offset', type: 'uint64' },
      ],
      [{ name: 'x', role: 'in', itemSize: 1, elementBytes: 4 }],
      { first: 100, count: 50, deviceFirst: 10 },
    );
    assert.deepEqual(args, [
      { kind: 'buffer', buffer: 'x', byteOffset: 40 },
      { kind: 'scalar', type: 'uint64', value: 50 },
      { kind: 'scalar', type: 'uint64', value: 100 },
    ]);
  });

  it('keeps the hash of a config without items or resident buffers', () => {
    const text =
      'buffers:\n  x: { type: float32, count: 1024, role: in }\n  y: { type: float32, count: 1024, role: out }\n' +
      'kernels:\n  - { source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }] }\n';
    const { config } = parseConfigText(text, '/tmp/plain.yaml');
    assert.equal(config.items, null);
    assert.ok(config.buffers.every((b) => b.itemSize === 1));
    assert.equal(
      configHash(config),
      configHash({ ...config, buffers: config.buffers.map(({ itemSize: _, ...b }) => b as ConfigBuffer) }),
    );
    assert.notEqual(configHash(config), configHash({ ...config, items: 1024 }));
  });

  it('partitions the items into chunks, and every buffer its elements and bytes, for any shape', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 7 }),
        (items, chunks, inItem, outItem) => {
          fc.pre(chunks <= items);
          const s = byRole(
            plan(itemsConfig({ items, inItem, outItem }).replace('chunks: 4', `chunks: ${chunks}`)),
            'overlapped',
          );
          let next = 0;
          for (const r of s.ranges) {
            assert.equal(r.first, next);
            next += r.count;
          }
          assert.equal(next, items);
          for (const [name, itemSize, direction] of [
            ['in', inItem, 'h2d'],
            ['out', outItem, 'd2h'],
          ] as const) {
            let at = 0;
            for (const c of copies(s, name)) {
              assert.equal(c.direction, direction);
              assert.equal(c.hostOffset, at);
              at += c.bytes;
            }
            assert.equal(at, items * itemSize * 4);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('a scratch buffer with an init', () => {
  it('is seeded on the device once (a GEMM operand holds data, not what the allocator left) and others are not', () => {
    const text = itemsConfig({
      extra:
        '  seededScratch: { type: bfloat16, itemSize: 4, role: scratch, init: { kind: random, seed: 3 } }\n  plainScratch: { type: float32, itemSize: 1, role: scratch }\n',
    });
    const { config } = parseConfigText(text, '/tmp/items.yaml');
    const seeded = Object.fromEntries(config.buffers.map((b) => [b.name, b.seeded === true]));
    assert.deepEqual(seeded, { in: false, table: false, out: false, seededScratch: true, plainScratch: false });
    assert.deepEqual(config.buffers.find((b) => b.name === 'seededScratch')?.init, { kind: 'random', seed: 3 });
  });
});

describe('config errors of buffers of any shape name the field', () => {
  it('refuses a count that disagrees with items × itemSize, naming the count', () => {
    const message = configError(
      itemsConfig().replace('itemSize: 256, role: in', 'itemSize: 256, count: 1000, role: in'),
    );
    assert.match(
      message,
      /items\.yaml:\d+:\d+: buffer "in": count 1000 disagrees with pipeline\.items × itemSize = 1000 × 256 = 256000 elements/,
    );
  });

  it('refuses a size that disagrees, naming the size, and accepts one that agrees', () => {
    assert.match(
      configError(itemsConfig().replace('itemSize: 1, role: out', 'itemSize: 1, size: 1KiB, role: out')),
      /buffer "out": size 1024 disagrees with pipeline\.items × itemSize/,
    );
    const { config } = parseConfigText(
      itemsConfig().replace('itemSize: 1, role: out', 'itemSize: 1, size: 4000, role: out'),
      '/tmp/items.yaml',
    );
    assert.equal(config.buffers.find((b) => b.name === 'out')?.elements, 1000);
  });

  it('refuses an itemSize on a resident buffer', () => {
    assert.match(
      configError(itemsConfig().replace('count: 256, role: resident', 'count: 256, itemSize: 2, role: resident')),
      /buffer "table" is resident: it is never chunked, so it has no itemSize/,
    );
  });

  it('refuses an itemSize without pipeline.items', () => {
    const text =
      'buffers:\n  x: { type: float32, count: 8, itemSize: 2, role: in }\n' +
      'kernels:\n  - { source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: x }, { chunk: elements }, { float32: 2 }] }\n';
    assert.match(configError(text), /buffers\.x\.itemSize|buffer "x" has an itemSize, but the pipeline has no items/);
  });

  it('refuses items and itemSize out of range, naming the field', () => {
    assert.match(
      configError(itemsConfig({ items: 0 })),
      /pipeline\.items: items is a count of items per rep: 1 or more/,
    );
    assert.match(
      configError(itemsConfig({ inItem: 0 })),
      /buffers\.in\.itemSize: itemSize is elements per item: 1 or more/,
    );
    assert.match(
      configError(itemsConfig({ items: 3 })),
      /items\.yaml:\d+:\d+: 4 chunks is more than the pipeline's 3 items/,
    );
  });

  it('refuses a resident buffer without a count or size, and a config with only resident buffers', () => {
    assert.match(
      configError(itemsConfig().replace('count: 256, role: resident', 'role: resident')),
      /buffer "table" needs exactly one of count \(elements\) or size \(bytes\)/,
    );
    const onlyResident =
      'buffers:\n  t: { type: float32, count: 8, role: resident }\n' +
      'kernels:\n  - { source: scale.cu, entry: scale, args: [{ buffer: t }, { buffer: t }, { chunk: elements }, { float32: 2 }] }\n';
    assert.match(configError(onlyResident), /every buffer is resident; a pipeline needs at least one chunked buffer/);
  });

  it('refuses a device-memory budget the resident buffers fill', () => {
    assert.match(
      configError(`deviceMemory: 1024\n${itemsConfig()}`),
      /deviceMemory: the resident buffers take 1024 bytes, which leaves none of the budget/,
    );
  });
});

describe('the overlap bound with unequal bytes each way', () => {
  // 256 MiB up and 1 MiB down (a reduction): the link term weighs what each direction moves alone by its bytes.
  const MiB = 2 ** 20;
  const parts: DeviceParts = {
    h2dMs: 10,
    d2hMs: 0.04,
    kernelWholeMs: 2,
    h2dBytes: 256 * MiB,
    d2hBytes: 1 * MiB,
    h2dCopiesPerChunk: 1,
    d2hCopiesPerChunk: 1,
    kernelsPerChunk: 1,
    linkMs: 10.1,
    linkPieces: 8,
    copyEngines: 3,
    h2dOpMs: 0,
    d2hOpMs: 0,
    launchOpMs: 0,
    hostCopyMs: 0,
    hostLaunchMs: 0,
    gated: true,
  };
  it('moves the fill-time share of the H2D bytes and all of the small D2H alone, the rest at the link rate', () => {
    const bound = layoutBound(parts, { chunks: 8, streams: 4, issue: 'stream', kernelsChunkedMs: null });
    const link = bound.terms.find((t) => t.term === 'link');
    // a = 1.25, k = 0.25, d = 0.005 a chunk; fill 1.5 ms moves 0.15 of the H2D bytes alone, drain 0.255 ms all of D2H.
    const alone = (256 * 0.15 + 1) / 257;
    assert.ok(link);
    assert.ok(Math.abs(link.steadyMs - 10.1 * (1 - alone)) < 1e-9, String(link.steadyMs));
    assert.ok(Math.abs(link.ms - (10.1 * (1 - alone) + 1.755)) < 1e-9);
    assert.equal(bound.term, 'link');
    // With the bytes equal (element counts instead of bytes) the link term would be another figure.
    const equal = layoutBound(
      { ...parts, d2hBytes: 256 * MiB },
      { chunks: 8, streams: 4, issue: 'stream', kernelsChunkedMs: null },
    );
    assert.notEqual(equal.terms.find((t) => t.term === 'link')?.ms, link.ms);
  });
});

describe('bfloat16 and the seeded pattern of 16-bit floats', () => {
  it('fills fp16 and bf16 with both signs and magnitudes in [0.125, 0.25)', () => {
    for (const [type, decode] of [
      ['float16', fromHalfBits],
      ['bfloat16', fromBfloat16Bits],
    ] as const) {
      const bytes = new Uint8Array(2 * 4096);
      fillPattern(bytes, type, { kind: 'random', seed: 3 });
      const values = Array.from(new Uint16Array(bytes.buffer), decode);
      assert.ok(
        values.every((v) => Math.abs(v) >= 0.125 && Math.abs(v) < 0.25),
        type,
      );
      const negative = values.filter((v) => v < 0).length;
      assert.ok(negative > 1800 && negative < 2300, `${type}: ${negative} negative of 4096`);
    }
  });

  it('rounds to bfloat16 to nearest even and fills constants through it', () => {
    assert.equal(toBfloat16Bits(1), 0x3f80);
    assert.equal(toBfloat16Bits(-2.5), 0xc020);
    // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even (1) wins; 1 + 3·2^-8 rounds up to 1 + 2^-6.
    assert.equal(toBfloat16Bits(1 + 2 ** -8), 0x3f80);
    assert.equal(toBfloat16Bits(1 + 3 * 2 ** -8), 0x3f82);
    assert.ok(Number.isNaN(fromBfloat16Bits(toBfloat16Bits(Number.NaN))));
    const bytes = new Uint8Array(4);
    fillPattern(bytes, 'bfloat16', { kind: 'constant', value: 0.5 });
    assert.deepEqual([...new Uint16Array(bytes.buffer)], [0x3f00, 0x3f00]);
  });
});

describe('verification with a tolerance', () => {
  const f32 = (...values: number[]) => new Uint8Array(new Float32Array(values).buffer);
  const tolerance = { relative: 0.01, absolute: 0.001 };

  it('passes values within absolute + relative × |expected| and reports the largest error', () => {
    const { mismatch, largest } = compareWithin(
      outBuffer('float32', 4, 3),
      f32(100, 0, -2),
      f32(100.5, 0.0009, -2),
      POISON.overlapped,
      tolerance,
    );
    assert.equal(mismatch, null);
    assert.ok(Math.abs(largest.absolute - 0.5) < 1e-6);
    assert.ok(Math.abs(largest.relative - 0.005) < 1e-6);
  });

  it('fails a value outside it, naming the first and counting all', () => {
    const { mismatch } = compareWithin(
      outBuffer('float32', 4, 4),
      f32(1, 100, 2, 3),
      f32(1, 102, 2, 3.5),
      POISON.overlapped,
      tolerance,
    );
    assert.deepEqual(mismatch, {
      buffer: 'out',
      index: 1,
      expected: '100',
      actual: '102',
      differing: 2,
      unwritten: false,
    });
  });

  it('matches NaN only with NaN, and an infinity only with itself', () => {
    const same = compareWithin(
      outBuffer('float32', 4, 2),
      f32(Number.NaN, Number.POSITIVE_INFINITY),
      f32(Number.NaN, Number.POSITIVE_INFINITY),
      POISON.overlapped,
      tolerance,
    );
    assert.equal(same.mismatch, null);
    const nan = compareWithin(outBuffer('float32', 4, 2), f32(1, 2), f32(Number.NaN, 2), POISON.overlapped, tolerance);
    assert.equal(nan.mismatch?.index, 0);
    const inf = compareWithin(
      outBuffer('float32', 4, 1),
      f32(Number.POSITIVE_INFINITY),
      f32(Number.NEGATIVE_INFINITY),
      POISON.overlapped,
      tolerance,
    );
    assert.equal(inf.mismatch?.differing, 1);
  });

  it('keeps integer outputs exact whatever the tolerance', () => {
    const ints = (...values: number[]) => new Uint8Array(new Int32Array(values).buffer);
    const { mismatch } = compareWithin(outBuffer('int32', 4, 2), ints(1000, 5), ints(1001, 5), POISON.overlapped, {
      relative: 0.5,
      absolute: 10,
    });
    assert.equal(mismatch?.index, 0);
  });

  it('decodes bfloat16 outputs and shows a mismatch as a number and its bits', () => {
    const bf = (...values: number[]) => new Uint8Array(new Uint16Array(values.map(toBfloat16Bits)).buffer);
    assert.equal(
      compareWithin(outBuffer('bfloat16', 2, 2), bf(1, 2), bf(1.0078125, 2), POISON.overlapped, tolerance).mismatch,
      null,
    );
    const { mismatch } = compareWithin(outBuffer('bfloat16', 2, 1), bf(1), bf(1.5), POISON.overlapped, tolerance);
    assert.equal(mismatch?.expected, '1 (0x3f80)');
    assert.equal(mismatch?.actual, '1.5 (0x3fc0)');
  });

  it('adds the windows up: the first mismatch indexed in the whole buffer, the largest error over all of them', () => {
    const largest = { absolute: 0, relative: 0 };
    const mismatch = compareWindows(
      outBuffer('float32', 4, 4),
      [f32(1, 2), f32(3, 4)],
      [f32(1, 2.001), f32(3, 5)],
      tolerance,
      largest,
    );
    assert.equal(mismatch?.index, 3);
    assert.ok(Math.abs(largest.absolute - 1) < 1e-6);
  });

  it('reads verify.tolerance from the config, and byte for byte without it', () => {
    assert.deepEqual(
      parseConfigText(`verify: { tolerance: { relative: 0.01 } }\n${itemsConfig()}`, '/tmp/items.yaml').config
        .tolerance,
      { relative: 0.01, absolute: 0 },
    );
    assert.equal(parseConfigText(itemsConfig(), '/tmp/items.yaml').config.tolerance, null);
    assert.match(
      configError(`verify: { tolerance: { relative: -1 } }\n${itemsConfig()}`),
      /verify\.tolerance\.relative/,
    );
  });
});

describe('a Result of buffers of any shape', () => {
  const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream);
  it('says the tolerance rule and the largest error where verification used one, and loads without it', () => {
    const base = makeResult();
    assert.equal(RunResultSchema.parse(base).verification.tolerance, undefined);
    assert.match(
      renderRunTable(base, plain, WIDE),
      /verification: passed \(overlapped outputs equal serial byte for byte/,
    );
    const within = {
      ...base,
      verification: {
        ...base.verification,
        tolerance: { relative: 0.01, absolute: 0.001, largestError: { absolute: 0.0025, relative: 0.0004 } },
      },
    };
    assert.deepEqual(RunResultSchema.parse(within).verification.tolerance?.largestError, {
      absolute: 0.0025,
      relative: 0.0004,
    });
    assert.match(
      renderRunTable(within, plain, WIDE),
      /verification: passed \(float outputs within 0\.001 \+ 0\.01 × \|serial\|, integers exact; largest error 0\.00250, relative 0\.000400\)/,
    );
  });

  it('counts layouts in items where the config gave pipeline.items', () => {
    const base = makeResult();
    assert.match(renderRunTable(base, plain, WIDE), /chunks × \d+ elements over/);
    assert.match(
      renderRunTable({ ...base, pipeline: { ...base.pipeline, items: base.pipeline.elements } }, plain, WIDE),
      /chunks × \d+ items over/,
    );
  });
});
