import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { STAGE_KINDS } from '../../src/kinds/index.js';

// The core (everything under src/ but src/kinds/) loops over the list of kinds and names none of the kinds that
// issue through a library of their own: a kind id written as a string outside src/kinds/ fails here. The places that
// still write "collective" are listed with their counts, each for a reason that is not dispatch: the list may only
// shrink, and a place that stops naming it must leave the list, so that it stays true.

const STILL_NAMED: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  collective: {
    // The Result's format: a collective-alone mode's role is `{ stage: 'collective', collective, buckets }`
    // (id `collective:<op>:<n>-buckets`), a discriminated union the vocabulary, the Result's schema, the planner
    // that makes the role and the labels that narrow it must spell out. Moving it would change recorded Results.
    'src/vocabulary.ts': 2,
    'src/result/mode.ts': 1,
    'src/plan/schedules.ts': 1,
    'src/report/labels.ts': 1,
    // A doc comment naming the plan's `collective` byte count (kind.ts's `moves` count), a field of the plan.
    'src/plan/types.ts': 1,
    // merge's skew table: its column head, a word of the report.
    'src/report/merge.ts': 1,
    // analyze may not load the list (analyze-reads-traces-not-devices): traces cuda-pipe wrote before ops carried
    // `args.collective` mark them with category `collective`; its own Chrome trace's skew events carry that category,
    // and its text counts "collectives": file formats and words, not a kind's dispatch.
    // Its reads name `args.collective` too.
    'src/traces/formats/cuda-pipe/parse.ts': 2,
    'src/report/analyze-trace.ts': 1,
    'src/report/analyze.ts': 1,
  },
  // The host stage's runtime and its report line are in its folder; the layout variant without it is the core's word.
  // Most of these are the word, not the kind: the config's key, a trace's host clock, an idle cause.
  host: {
    // The idle cause "waiting on the host", and its share.
    'src/analysis/timeline.ts': 2,
    // analyze: a step's clock, and its own Chrome trace's category.
    'src/analysis/analyze.ts': 1,
    'src/traces/events.ts': 2,
    'src/analysis/steps.ts': 2,
    'src/traces/formats/cuda-pipe/parse.ts': 1,
    'src/traces/formats/kineto/parse.ts': 5,
    'src/traces/formats/nsys/parse.ts': 1,
    // The replay graph's host edges (a thread's calls one after another) and the findings that read them.
    'src/analysis/calibrate.ts': 1,
    'src/analysis/causes.ts': 2,
    'src/analysis/graph-edges.ts': 2,
    'src/analysis/graph.ts': 2,
    'src/report/analyze-trace.ts': 1,
    // The config's `host:` key (and --workers on host.workers).
    'src/config/load.ts': 4,
    // A layout's host variant (the Result's `OverlapLayout.host`, and its name among the layout variants in the
    // vocabulary), and the idle column.
    'src/plan/schedules.ts': 1,
    'src/report/timeline-common.ts': 2,
    'src/report/labels.ts': 1,
    'src/vocabulary.ts': 1,
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
