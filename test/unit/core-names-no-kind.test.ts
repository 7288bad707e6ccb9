import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { STAGE_KINDS } from '../../src/kinds/index.js';

// The core (everything under src/ but src/kinds/) loops over the list of kinds and names none of the kinds that
// issue through a library of their own: a kind id written as a string outside src/kinds/ fails here. The collective
// kind's plan passes, reduction check, communication analysis and report still live in the core (issue 28 moved its
// runtime only), so the places that still name it are listed with their counts: the list may only shrink, and a
// place that stops naming it must leave the list, so that it stays true.

const STILL_NAMED: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  collective: {
    // Plan passes: the communication stream, data-parallel replication, the all-reduce's reference, traced groups.
    'src/plan/build.ts': 2,
    'src/plan/data-parallel.ts': 2,
    'src/plan/schedules.ts': 2,
    'src/plan/trace.ts': 1,
    'src/plan/types.ts': 1,
    // The reduction check and the mode's collective figures.
    'src/measure/reduction.ts': 1,
    'src/measure/repeat.ts': 1,
    'src/measure/result.ts': 2,
    // A collective mode's role (`collective:<op>:<n>-buckets`), in the vocabulary, the Result and its labels.
    'src/vocabulary.ts': 2,
    'src/result/mode.ts': 1,
    'src/report/labels.ts': 1,
    'src/compare/verdict.ts': 1,
    // A config with a collective step plans data-parallel.
    'src/config/load.ts': 1,
    // merge's per-collective skew and its column.
    'src/compare/merge.ts': 1,
    'src/report/merge.ts': 1,
    // analyze: own traces written before ops carried `args.collective`, and its own Chrome trace's category and noun.
    'src/analyze/chrome-own.ts': 1,
    'src/report/analyze-trace.ts': 1,
    'src/report/analyze.ts': 1,
  },
  // The host stage's runtime is in its folder; its CPU-stage report and the layout without it are still the core's.
  // Most of these are the word, not the kind: the config's key, a trace's host clock, an idle cause.
  host: {
    // The idle cause "waiting on the host", and its share.
    'src/analysis/timeline.ts': 2,
    // analyze: a step's clock, and its own Chrome trace's category.
    'src/analyze/chrome-own.ts': 1,
    'src/analyze/kineto.ts': 3,
    'src/analyze/model.ts': 2,
    'src/analyze/nsys.ts': 1,
    'src/analyze/steps.ts': 2,
    'src/report/analyze-trace.ts': 1,
    // The config's `host:` key (and --workers on host.workers).
    'src/config/load.ts': 4,
    // A layout's host variant, the idle column, and the CPU stage's report against the layout without it.
    'src/plan/schedules.ts': 1,
    'src/report/timeline-common.ts': 2,
    'src/report/labels.ts': 1,
    'src/report/toolbox.ts': 3,
  },
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === join('src', 'kinds') ? [] : sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Per file outside src/kinds/, how many times `id` is written as a string literal. */
function namings(id: string): Record<string, number> {
  const literal = new RegExp(`['"\`]${id}['"\`]`, 'g');
  const found: Record<string, number> = {};
  for (const file of sources('src')) {
    const count = readFileSync(file, 'utf8').match(literal)?.length ?? 0;
    if (count) found[relative('.', file)] = count;
  }
  return found;
}

describe('the core names no kind that has a runtime of its own', () => {
  const library = STAGE_KINDS.filter((kind) => 'runtime' in kind && kind.runtime !== undefined).map((kind) => kind.id);

  it('finds the kinds to check in the list itself: gemm, matmul, collective and host today', () => {
    assert.deepEqual([...library].sort(), ['collective', 'gemm', 'host', 'matmul']);
  });

  for (const id of library) {
    it(`writes "${id}" nowhere outside src/kinds/ but the places still listed`, () => {
      assert.deepEqual(namings(id), STILL_NAMED[id] ?? {});
    });
  }

  it('would see a kind id written in the core (the scan finds the core kinds it does not check)', () => {
    assert.ok((namings('kernel')['src/plan/schedules.ts'] ?? 0) > 0);
  });
});
