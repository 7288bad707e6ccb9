import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { analyzeTraces } from '../../src/analysis/analyze.js';
import { parseTraceFile } from '../../src/traces/parse.js';
import { packageRoot } from '../../src/paths.js';

// A finding is a claim: what the step would save without its cause. Over every trace the repository holds (the
// fixtures and every trace committed under docs/measurements/), the claims must hold against what was measured: no
// finding saves nothing, and a device's findings together never save more than its steps take above their floors.

const root = packageRoot();
const TRACE = /(\.pt\.trace\.json(\.gz)?|trace\.json|\.sqlite)$/;

function traceFiles(): string[] {
  const found: string[] = [];
  for (const folder of ['test/fixtures', 'docs/measurements']) {
    for (const entry of readdirSync(join(root, folder), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !TRACE.test(entry.name) || entry.name.startsWith('hostile')) continue;
      found.push(join(entry.parentPath, entry.name));
    }
  }
  // Several measurements keep a copy of a fixture: each content once.
  const byContent = new Map<string, string>();
  for (const file of found.sort()) {
    const hash = createHash('sha1').update(readFileSync(file)).digest('hex');
    if (!byContent.has(hash)) byContent.set(hash, file);
  }
  return [...byContent.values()];
}

describe('findings over every trace in the repository', () => {
  const files = traceFiles();

  it('finds the traces: the fixtures and the measured ones', () => {
    assert.ok(files.length >= 40, `${files.length} traces`);
  });

  it('credits each finding with a saving above 0, and each device with no more than its steps take above their floors', {
    timeout: 120_000,
  }, async () => {
    let analysed = 0;
    for (const file of files) {
      let trace: Awaited<ReturnType<typeof parseTraceFile>>;
      try {
        trace = await parseTraceFile(file);
      } catch (error) {
        // A run's Chrome trace of something other than a pipeline (a sweep's, a probe's) is not a trace analyze reads.
        if (/neither a PyTorch profiler/.test((error as Error).message)) continue;
        throw error;
      }
      analysed++;
      const document = analyzeTraces([trace], { rates: null, toolVersion: 'test' });
      for (const device of document.devices) {
        const own = document.findings.filter((f) => f.device === device.device && f.rank === device.rank);
        const headroom =
          device.steps.reduce((sum, s) => sum + Math.max(0, s.ms - s.floor.ms), 0) / Math.max(1, device.steps.length);
        const credited = own.reduce((sum, f) => sum + f.ms, 0);
        const where = `${relative(root, file)} GPU ${device.device}`;
        for (const f of own)
          assert.ok(f.ms > 0 && f.steps >= 1, `${where}: ${f.code} credited ${f.ms} ms over ${f.steps} steps`);
        assert.ok(
          credited <= headroom + 1e-9,
          `${where}: findings credit ${credited} ms a step, above the ${headroom} ms its steps take above their floors`,
        );
      }
    }
    assert.ok(analysed >= 40, `${analysed} traces analysed`);
  });
});
