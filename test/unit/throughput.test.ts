import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { stageThroughput } from '../../src/measure/result.js';
import { kernelRangeBytes } from '../../src/measure/timeline.js';
import { buildPlan } from '../../src/plan/build.js';
import { markdownExporter } from '../../src/report/exporters/markdown.js';
import { tableExporter } from '../../src/report/exporters/table.js';
import { makeStyle } from '../../src/report/style.js';
import { loadResults } from '../../src/result/load.js';
import { RunResultSchema } from '../../src/result/schema.js';
import { makeResult } from '../helpers/results.js';

const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream);

describe('throughput per stage', () => {
  it("gives configs/gemm.yaml's product alone its 16 × 2·4096³ flops and TFLOP/s at the median", () => {
    const { config, locate } = parseConfigText(
      readFileSync('configs/gemm.yaml', 'utf8'),
      `${process.cwd()}/configs/gemm.yaml`,
    );
    const plan = buildPlan(config, resolveKernels(config, locate));
    const stage = plan.schedules.find((s) => s.role.kind === 'stage' && s.role.stage === 'kernel');
    assert.ok(stage);
    const { throughput } = stageThroughput(stage, 2, kernelRangeBytes(plan));
    const flop = 16 * 2 * 4096 ** 3;
    assert.equal(throughput?.flop, flop);
    assert.equal(throughput?.tflops, flop / 2e9);
    // A's 65536 rows and one 4096 × 4096 B, in bf16; beta 0 leaves C unread.
    assert.equal(throughput?.bytes, (65536 * 4096 + 4096 * 4096) * 2);
  });

  it("gives balanced's fma kernel alone the bytes of its input and output ranges over its median, and no flops", () => {
    const result = makeResult();
    const kernel = result.modes.find((m) => m.role.kind === 'stage' && m.role.stage === 'kernel');
    assert.ok(kernel?.throughput);
    assert.equal(kernel.throughput.bytes, 2 * 256 * 2 ** 20);
    assert.equal(kernel.throughput.gbPerSecond, (2 * 256 * 2 ** 20) / kernel.stats.median / 1e6);
    assert.equal(kernel.throughput.flop, undefined);
  });

  it('leaves copies, serial and overlapped modes without a throughput (they mix stages or have their copy rate)', () => {
    const result = makeResult();
    const others = result.modes.filter((m) => !(m.role.kind === 'stage' && m.role.stage === 'kernel'));
    assert.ok(others.length > 3);
    for (const mode of others) assert.equal(mode.throughput, undefined, mode.id);
  });

  it("prints the kernel's GB/s in the rate column of the table and the Markdown", () => {
    const result = makeResult();
    const gbps = result.modes.find((m) => m.throughput)?.throughput?.gbPerSecond;
    assert.ok(gbps !== undefined);
    const expected = `${gbps.toFixed(1)} GB/s`;
    const row = tableExporter
      .render([result], plain)
      .split('\n')
      .find((line) => line.includes('kernel fma alone'));
    assert.ok(row?.includes(expected), row);
    const md = markdownExporter
      .render([result], plain)
      .split('\n')
      .find((line) => line.includes('kernel fma alone'));
    assert.ok(md?.includes(`| ${expected} |`), md);
  });

  it('prints TFLOP/s for a GEMM stage in the rate column', () => {
    const result = makeResult();
    const modes = result.modes.map((m) =>
      m.throughput ? { ...m, throughput: { flop: 2.2e12, tflops: 771.9, bytes: 1e9, gbPerSecond: 350 } } : m,
    );
    const row = tableExporter
      .render([{ ...result, modes }], plain)
      .split('\n')
      .find((line) => line.includes('kernel fma alone'));
    assert.ok(row?.includes('771.9 TFLOP/s'), row);
  });

  it('keeps the Result schema backward compatible: the field is optional and recorded files without it load', () => {
    const result = makeResult();
    assert.ok(RunResultSchema.safeParse(result).success);
    const [recorded] = loadResults('test/fixtures/h200-compute-bound.json');
    assert.ok(recorded);
    assert.ok(recorded.modes.every((m) => m.throughput === undefined));
  });
});
