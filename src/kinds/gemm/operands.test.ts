import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { planConfig } from '../../api/run.js';
import { parseConfigText } from '../../config/load.js';
import { packageRoot } from '../../paths.js';
import { usageRejection as rejection } from '../../../test/helpers/rejection.js';

// A GEMM step's operands checked against the buffers they name, when the config is read and when it is planned at
// a finer chunking: each shape that would read or write out of bounds on the GPU is refused on the CPU, naming the
// field (moved here from test/unit/hostile-plans.test.ts, with the kind's config resolution).

const parse = (text: string) => () => parseConfigText(text, '/cfg/plan.yaml');

/** A GEMM over 1,024 items of x (64 float32 each) into y, with `w` and the entry's fields as given. */
const gemmConfig = (w: string, gemm: string, extra = '') =>
  `buffers:\n  x: { type: float32, itemSize: 64, role: in }\n  w: ${w}\n  y: { type: float32, itemSize: 64, role: out }\n${extra}kernels:\n  - gemm: { ${gemm} }\npipeline: { items: 1024, chunks: 4 }\n`;

describe('GEMM operands against their buffers', () => {
  it('plans the shapes that fit', () => {
    const loaded = parseConfigText(
      gemmConfig('{ type: float32, count: 4096, role: resident }', 'a: x, b: w, c: y, n: 64, k: 64, dtype: fp32'),
      '/cfg/plan.yaml',
    );
    assert.equal(loaded.config.steps?.[0]?.stage, 'gemm');
  });

  it('refuses a resident B of 16 elements for k × n = 4,096, naming gemm.b', () => {
    const error = rejection(
      parse(gemmConfig('{ type: float32, count: 16, role: resident }', 'a: x, b: w, c: y, n: 64, k: 64, dtype: fp32')),
    );
    assert.match(
      error.message,
      /^\/cfg\/plan\.yaml:\d+:\d+: kernels\[0\]: gemm\.b: resident buffer "w" holds 16 elements, but the product needs k × n = 64 × 64, 4096 elements\.$/,
    );
  });

  it('refuses m: 1024 with resident A and C of 64 elements, naming gemm.a', () => {
    const text =
      'buffers:\n  w: { type: float32, itemSize: 4096, role: in }\n  x: { type: float32, count: 64, role: resident }\n  y: { type: float32, count: 64, role: resident }\n  out: { type: float32, itemSize: 1, role: out }\n' +
      'kernels:\n  - gemm: { a: x, b: w, c: y, m: 1024, n: 64, k: 64, dtype: fp32 }\npipeline: { items: 4, chunks: 4 }\n';
    assert.match(
      rejection(parse(text)).message,
      /gemm\.a: resident buffer "x" holds 64 elements, but the product needs m = 1024 rows of k = 64, 65536 elements\.$/,
    );
  });

  it('refuses a resident A too small for every item at once, as the serial mode multiplies them', () => {
    const text = gemmConfig(
      '{ type: float32, count: 4096, role: resident }',
      'a: r, b: w, c: y, n: 64, k: 64, dtype: fp32',
      '  r: { type: float32, count: 64, role: resident }\n',
    );
    assert.match(
      rejection(parse(text)).message,
      /gemm\.a: resident buffer "r" holds 64 elements, but the product needs 1024 rows \(every item, as the serial mode runs them\) of k = 64, 65536 elements/,
    );
  });

  it("refuses a chunk of B smaller than the product's B, when the chunks are cut finer", () => {
    const loaded = parseConfigText(
      readFileSync(join(packageRoot(), 'configs', 'gemm.yaml'), 'utf8'),
      join(packageRoot(), 'configs', 'gemm.yaml'),
    );
    assert.ok(planConfig(loaded, { gate: false, devices: null }).plan.schedules.length > 0);
    const finer = parseConfigText(
      readFileSync(join(packageRoot(), 'configs', 'gemm.yaml'), 'utf8').replace('chunks: 16', 'chunks: 32'),
      '/cfg/gemm.yaml',
    );
    const error = rejection(() => planConfig(finer, { gate: false, devices: null }));
    assert.match(
      error.message,
      /^kernels entry "product": gemm\.b: chunk 0 of "b" holds 2048 items of 4096 elements \(8388608\), less than the B of k × n = 4096 × 4096 = 16777216 elements/,
    );
  });

  it('refuses a chunked B whose items are smaller than the B each layer reads (with m)', () => {
    const text =
      'buffers:\n  w: { type: float32, itemSize: 16, role: in }\n  x: { type: float32, count: 4096, role: resident }\n  y: { type: float32, count: 4096, role: resident }\n  out: { type: float32, itemSize: 1, role: out }\n' +
      'kernels:\n  - gemm: { a: x, b: w, c: y, m: 64, n: 64, k: 64, dtype: fp32 }\npipeline: { items: 4, chunks: 4 }\n';
    assert.match(
      rejection(parse(text)).message,
      /gemm\.b: each chunk of "w" starts a B of k × n = 64 × 64 = 4096 elements, but its items hold 16; give "w" itemSize: 4096/,
    );
  });

  it('refuses C naming the same buffer as A', () => {
    const text = gemmConfig(
      '{ type: float32, count: 4096, role: resident }',
      'a: x, b: w, c: x, n: 64, k: 64, dtype: fp32',
    );
    assert.match(
      rejection(parse(text)).message,
      /kernels\[0\]: gemm\.c: C names "x", which is also A: cuBLAS would overwrite A while reading it/,
    );
  });

  it("refuses n = 2^31, which overflows cuBLAS's int", () => {
    const error = rejection(
      parse(
        gemmConfig(
          '{ type: float32, count: 4096, role: resident }',
          'a: x, b: w, c: y, n: 2147483648, k: 64, dtype: fp32',
        ),
      ),
    );
    assert.match(
      error.message,
      /kernels\[0\]\.gemm\.n.*n is at most 2\^31 - 1 \(2147483647\), the largest int cuBLAS takes/s,
    );
  });
});
