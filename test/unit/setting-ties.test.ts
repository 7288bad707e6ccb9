import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { packageRoot } from '../../src/paths.js';
import { fastestSetting } from '../../src/report/exporters/sweep.js';
import { loadResults } from '../../src/result/load.js';
import type { RunResult } from '../../src/result/schema.js';

// A sweep over several settings (--set) first names the setting whose best layout was fastest. That is a claim like
// a best layout: where another setting's best ties with it within noise, as a layout ties with the best, the line says
// so, instead of calling the first "fastest" by a hair. Held here against every recorded sweep over settings.

const DEADLINE = { timeout: 60_000 };
const root = packageRoot();
const jsonUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? jsonUnder(path) : name.endsWith('.json') ? [path] : [];
  });

/** Every recorded document that holds the Results of a sweep over two settings or more. */
function recordedSettingSweeps(): Map<string, RunResult[]> {
  const found = new Map<string, RunResult[]>();
  for (const file of ['docs/measurements', 'baselines', 'test/fixtures'].flatMap((d) => jsonUnder(join(root, d)))) {
    // Only an array of sweeps is read as Results: the rest of the 130 MB is not parsed twice.
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      continue;
    }
    if (!Array.isArray(raw) || raw.length < 2 || !raw.every((r) => r && typeof r === 'object' && 'sweep' in r))
      continue;
    const results = loadResults(file);
    if (results.length >= 2 && results.every((r) => r.sweep)) found.set(relative(root, file), results);
  }
  return found;
}

describe('the fastest of several settings', () => {
  it('names the settings that tie with it within noise, on every recorded sweep over settings', DEADLINE, () => {
    const said = Object.fromEntries(
      [...recordedSettingSweeps()].map(([file, results]) => [file, fastestSetting(results)]),
    );
    assert.deepEqual(said, {
      'docs/measurements/2026-11-24-h200-final/workers/sweep-workers.json': [
        'fastest of 4 settings: host.workers = 2, at 64 chunks × 4 streams, depth-first: 5.860 ms',
      ],
      'docs/measurements/2026-11-24-h200-issues17-18/workers/workers/sweep-workers.json': [
        'fastest of 4 settings: host.workers = 2, at 64 chunks × 4 streams, depth-first: 5.878 ms',
      ],
      // The priority's two settings are 0.7% and 0.5% apart, inside each best's middle half.
      'docs/measurements/2026-11-28-h200x2-ddp-knobs/sweep-g2.json': [
        'fastest of 2 settings: kernels[1].collective.priority = low, at 32 chunks × 3 streams, depth-first: 4.104 ms; ' +
          'ties within noise: kernels[1].collective.priority = high (4.132 ms)',
      ],
      'docs/measurements/2026-11-28-h200x4-ddp-knobs/sweep-g4.json': [
        'fastest of 2 settings: kernels[1].collective.priority = low, at 32 chunks × 3 streams, depth-first: 4.404 ms; ' +
          'ties within noise: kernels[1].collective.priority = high (4.428 ms)',
      ],
      // One hardware queue against CUDA's 8, each in a process of its own, on one H200.
      'docs/measurements/2026-11-29-h200-connections/balanced.json': [
        'fastest of 2 settings: pipeline.connections = 1, at 32 chunks × 4 streams, depth-first: 5.671 ms',
      ],
      'docs/measurements/2026-11-29-h200-connections/ddp.json': [
        'fastest of 2 settings: pipeline.connections = 1, at 8 chunks × 3 streams, depth-first: 3.372 ms; ' +
          'ties within noise: pipeline.connections = 8 (3.381 ms)',
      ],
      // Its race read no clock (the Results of 97e8acd): nothing is said of the clock.
      'docs/measurements/2026-11-29-h200-connections/matmul.json': [
        'fastest of 2 settings: pipeline.connections = 1, at 16 chunks × 4 streams, depth-first: 1.347 ms',
      ],
      // Two more rounds in each of two calls; from ca86854 on the race read the best layouts' clocks, which matched.
      'docs/measurements/2026-11-29-h200-connections/rounds-97e8acd/balanced-2.json': [
        'fastest of 2 settings: pipeline.connections = 1, at 32 chunks × 4 streams, depth-first: 5.666 ms',
      ],
      'docs/measurements/2026-11-29-h200-connections/rounds-97e8acd/balanced-3.json': [
        'fastest of 2 settings: pipeline.connections = 1, at 32 chunks × 4 streams, depth-first: 5.679 ms',
      ],
      'docs/measurements/2026-11-29-h200-connections/rounds-97e8acd/matmul-2.json': [
        'fastest of 2 settings: pipeline.connections = 1, at 16 chunks × 4 streams, depth-first: 1.345 ms',
      ],
      'docs/measurements/2026-11-29-h200-connections/rounds-97e8acd/matmul-3.json': [
        'fastest of 2 settings: pipeline.connections = 1, at 16 chunks × 4 streams, depth-first: 1.351 ms; ' +
          'ties within noise: pipeline.connections = 8 (1.359 ms)',
      ],
      'docs/measurements/2026-11-29-h200-connections/rounds-ca86854/balanced-2.json': [
        'fastest of 2 settings: pipeline.connections = 1, at 32 chunks × 4 streams, depth-first: 5.675 ms',
      ],
      'docs/measurements/2026-11-29-h200-connections/rounds-ca86854/balanced-3.json': [
        'fastest of 2 settings: pipeline.connections = 1, at 32 chunks × 8 streams, depth-first: 5.660 ms',
      ],
      'docs/measurements/2026-11-29-h200-connections/rounds-ca86854/matmul-2.json': [
        'fastest of 2 settings: pipeline.connections = 1, at 16 chunks × 4 streams, depth-first: 1.345 ms',
      ],
      'docs/measurements/2026-11-29-h200-connections/rounds-ca86854/matmul-3.json': [
        'fastest of 2 settings: pipeline.connections = 1, at 16 chunks × 4 streams, depth-first: 1.338 ms',
      ],
      // One rank moves nothing, so the CTA count cannot matter: 3.373 against 3.374 ms.
      'docs/measurements/2026-11-29-h200-ctas/sweep-ctas.json': [
        'fastest of 2 settings: kernels[1].collective.ctas = 16, at 8 chunks × 3 streams, depth-first: 3.373 ms; ' +
          'ties within noise: kernels[1].collective.ctas = 2 (3.374 ms)',
      ],
    });
  });

  it(
    "says where the SM clock spread over 5% across the settings' best layouts, and nothing where it did not or was not read",
    DEADLINE,
    () => {
      const [results] = [...recordedSettingSweeps().values()];
      assert.ok(results && results.length >= 2);
      // Each setting's best layout given a clock range, the first setting's first.
      const at = (...ranges: Array<{ min: number; max: number } | null>) =>
        results.map((r, i) => ({
          ...r,
          modes: r.modes.map((m) => (m.id === r.sweep?.best.mode ? { ...m, smClockMHz: ranges[i] ?? null } : m)),
        }));
      const others = (range: { min: number; max: number }) => results.slice(1).map(() => range);
      const same = { min: 1890, max: 1980 };
      assert.equal(fastestSetting(at(same, ...others(same))).length, 1);
      assert.equal(fastestSetting(at(null, ...others(same))).length, 1, 'one best not read');
      const top = { min: 1980, max: 1980 };
      const apart = fastestSetting(at({ min: 1700, max: 1750 }, ...others(top)));
      assert.match(
        apart[1] ?? '',
        /^the SM clock differed between the settings' best layouts \(1700 to 1750 MHz with /,
      );
      assert.match(apart[1] ?? '', /: part of their difference may be the clock's$/);
      const moving = fastestSetting(at({ min: 1800, max: 1980 }, ...others(top)));
      assert.match(
        moving[1] ?? '',
        /^the SM clock moved while the settings' best layouts ran \(1800 to 1980 MHz with /,
      );
    },
  );

  it(
    'ties none where each other setting is clearly slower: its middle half above the fastest one\u2019s',
    DEADLINE,
    () => {
      const [results] = [...recordedSettingSweeps().values()];
      assert.ok(results);
      const [first] = results;
      assert.ok(first);
      const best = first.modes.find((m) => m.id === first.sweep?.best.mode);
      assert.ok(best);
      // The other setting's best, its every rep 2% slower than the first's third quartile allows.
      const shifted = best.stats.q3 * 1.02 - best.stats.q1;
      const slower = structuredClone(first);
      for (const mode of slower.modes) {
        mode.samplesMs = mode.samplesMs.map((ms) => ms + shifted);
        for (const key of ['median', 'q1', 'q3', 'min', 'max', 'mean'] as const) mode.stats[key] += shifted;
      }
      if (slower.sweep) slower.sweep.settings = { 'host.workers': 9 };
      const [line] = fastestSetting([slower, first]);
      assert.doesNotMatch(line ?? '', /ties within noise/);
      // Moved back inside the first's middle half, it ties.
      for (const mode of slower.modes) {
        mode.samplesMs = mode.samplesMs.map((ms) => ms - shifted * 0.99);
        for (const key of ['median', 'q1', 'q3', 'min', 'max', 'mean'] as const) mode.stats[key] -= shifted * 0.99;
      }
      assert.match(fastestSetting([slower, first])[0] ?? '', /; ties within noise: host\.workers = 9 \(/);
    },
  );
});
