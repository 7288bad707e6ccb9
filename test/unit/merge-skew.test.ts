import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { mergeResults } from '../../src/compare/merge.js';
import { participantName, type Skew } from '../../src/compare/skew.js';
import { renderMerge, SKEW_ROWS_MAX } from '../../src/report/merge.js';
import { makeStyle } from '../../src/report/style.js';
import { loadResults } from '../../src/result/load.js';
import type { RunResult } from '../../src/result/schema.js';
import type { TimelineOp, TracedRep } from '../../src/result/timeline.js';
import { runCli } from '../helpers/cli.js';

// The ranks of a data-parallel launch, made from a real H200 result with a traced rep of hand-made all-reduces: each
// rank's rep starts at a chosen wall-clock time and reaches each bucket's call at a chosen time after it. The times
// are multiples of 1/4 ms, exact in binary even added to an epoch of 1.77e12 ms, so the skews compare exactly.
const h200 = loadResults(join('test', 'fixtures', 'h200-balanced-16-model.json'))[0] as RunResult;
const MODE = 'overlapped:16x4:depth-first:chunk-per-stream';
const EPOCH = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const MiB = 1024 ** 2;

function allreduces(mode: string, device: number, starts: readonly number[]): TimelineOp[] {
  return starts.map((startMs, chunk) => ({
    mode,
    device,
    stream: 'comm',
    kind: 'collective',
    chunk,
    buffer: 'grads',
    kernel: 'allreduce',
    bytes: 64 * MiB,
    collective: 'allreduce',
    startMs,
    endMs: startMs + 1,
    issuedMs: 0.01,
  }));
}

function rep(device: number, originEpochMs: number | undefined, starts: readonly number[], mode = MODE): TracedRep {
  return {
    mode,
    device,
    totalMs: 12,
    issueMs: 0.2,
    ...(originEpochMs === undefined ? {} : { originEpochMs }),
    streams: [{ id: 'comm', flags: 'non-blocking', priority: null }],
    ops: allreduces(mode, device, starts),
  };
}

function ddpRank(rank: number, host: string, reps: TracedRep[], device = rank): RunResult {
  const r = structuredClone(h200);
  r.run = { hostname: host, rank, localRank: device, size: 2, jobId: '9', launcher: 'torchrun' };
  r.devices = [{ ...(r.devices[0] as RunResult['devices'][number]), index: device }];
  for (const m of r.modes) m.device = device;
  r.timeline = { reps };
  return r;
}

// Rank 0 reaches its calls at 1, 3, 5 and 7 ms after EPOCH; rank 1's rep started 0.5 ms later and reaches them at
// 1.25, 3.5, 5.25 and 6.75 ms after EPOCH: rank 1 is last three times, by 0.25, 0.5 and 0.25 ms, rank 0 once, by 0.25
// ms.
const rank0 = ddpRank(0, 'gpu7', [rep(0, EPOCH, [1, 3, 5, 7])]);
const rank1 = ddpRank(1, 'gpu7', [rep(1, EPOCH + 0.5, [0.75, 3, 4.75, 6.25])]);

function measured(skew: Skew | null | undefined): Extract<Skew, { kind: 'measured' }> {
  assert.equal(skew?.kind, 'measured', JSON.stringify(skew && 'reason' in skew ? skew.reason : skew));
  return skew as Extract<Skew, { kind: 'measured' }>;
}

describe('merge: the arrival skew of collectives between ranks', () => {
  it('pairs the ranks’ all-reduces by bucket: skews 0.25, 0.5, 0.25, 0.25 ms, rank 1 last at 3 of 4', () => {
    const skew = measured(mergeResults([rank1, rank0]).configs[0]?.skew);
    assert.deepEqual(skew.participants.map(participantName), ['rank 0', 'rank 1']);
    const [mode] = skew.modes;
    assert.ok(mode);
    assert.equal(mode.mode, MODE);
    assert.deepEqual(
      mode.calls.map((c) => [c.order, c.chunk, c.collective, c.bytes, c.skewMs, participantName(c.last.who)]),
      [
        [0, 0, 'allreduce', 64 * MiB, 0.25, 'rank 1'],
        [1, 1, 'allreduce', 64 * MiB, 0.5, 'rank 1'],
        [2, 2, 'allreduce', 64 * MiB, 0.25, 'rank 1'],
        [3, 3, 'allreduce', 64 * MiB, 0.25, 'rank 0'],
      ],
    );
    assert.deepEqual(
      mode.calls[1]?.arrivals.map((a) => a.epochMs - EPOCH),
      [3, 3.5],
    );
    assert.equal(mode.medianMs, 0.25);
    assert.equal(mode.maxMs, 0.5);
    assert.deepEqual(
      mode.last.map((l) => `${participantName(l.who)}:${l.count}`),
      ['rank 0:1', 'rank 1:3'],
    );
    assert.deepEqual(
      { who: skew.mostOftenLast.who.map(participantName), count: skew.mostOftenLast.count, of: skew.mostOftenLast.of },
      { who: ['rank 1'], count: 3, of: 4 },
    );
    assert.deepEqual(skew.unpaired, []);
  });

  it('prints a row per call with each rank’s arrival after the first, the skew and the last rank', () => {
    const text = renderMerge(mergeResults([rank0, rank1]), makeStyle(undefined, { NO_COLOR: '1' }));
    assert.match(
      text,
      /^collective arrival skew, overlapped:16x4:depth-first:chunk-per-stream: 4 all-reduces of 64 MiB\n {2}median 0\.250 ms, max 0\.500 ms; last: rank 0 1 time, rank 1 3 times$/m,
    );
    assert.match(text, /│ 2 bucket 1 all-reduce │ +first │ +\+0\.500 ms │ 0\.500 ms │ rank 1 │/);
    assert.match(text, /^last to arrive most often: rank 1, at 3 of 4 collectives$/m);
  });

  it(`beyond ${SKEW_ROWS_MAX} calls a mode gives its summary alone; a tie names every rank that was last as often`, () => {
    const starts = Array.from({ length: 32 }, (_, k) => k);
    // Rank 1 is 0.25 ms late at even buckets, rank 0 0.75 ms late at odd ones: 16 each, median skew 0.5 ms.
    const late = (by: number, parity: number) => starts.map((s, k) => (k % 2 === parity ? s + by : s));
    const a = ddpRank(0, 'gpu7', [rep(0, EPOCH, late(0.75, 1))]);
    const b = ddpRank(1, 'gpu7', [rep(1, EPOCH, late(0.25, 0))]);
    const merged = mergeResults([a, b]);
    const skew = measured(merged.configs[0]?.skew);
    assert.equal(skew.modes[0]?.medianMs, 0.5);
    assert.equal(skew.modes[0]?.maxMs, 0.75);
    assert.deepEqual(skew.mostOftenLast.who.map(participantName), ['rank 0', 'rank 1']);
    const text = renderMerge(merged, makeStyle(undefined, { NO_COLOR: '1' }));
    assert.match(
      text,
      /: 32 all-reduces of 64 MiB\n {2}median 0\.500 ms, max 0\.750 ms; last: rank 0 16 times, rank 1 16 times$/m,
    );
    assert.doesNotMatch(text, /bucket 0 all-reduce/);
    assert.match(text, /^last to arrive most often: rank 0 and rank 1, at 16 of 32 collectives each$/m);
  });

  it('one process over two GPUs: each device’s rep is a participant, named by its GPU', () => {
    const both = ddpRank(0, 'gpu7', [rep(0, EPOCH, [1, 2]), rep(1, EPOCH, [1.5, 2])]);
    both.run = { ...both.run, rank: null, localRank: null, size: null, launcher: null };
    both.devices = [
      both.devices[0] as RunResult['devices'][number],
      { ...(both.devices[0] as RunResult['devices'][number]), index: 1 },
    ];
    const skew = measured(mergeResults([both]).configs[0]?.skew);
    assert.deepEqual(skew.participants.map(participantName), ['gpu7 GPU 0', 'gpu7 GPU 1']);
    assert.deepEqual(
      skew.modes[0]?.calls.map((c) => [c.skewMs, participantName(c.last.who)]),
      [
        [0.5, 'gpu7 GPU 1'],
        [0, 'gpu7 GPU 0'],
      ],
    );
  });

  it('says the skew cannot be compared for ranks on different hosts, or traced before reps carried their wall-clock start', () => {
    const apart = mergeResults([rank0, ddpRank(1, 'gpu8', [rep(1, EPOCH + 0.5, [0.75, 3, 4.75, 6.25])])]).configs[0]
      ?.skew;
    assert.deepEqual(apart, {
      kind: 'unknown',
      reason: 'the ranks ran on 2 hosts (gpu7, gpu8), whose wall clocks are not one clock',
    });
    const older = mergeResults([rank0, ddpRank(1, 'gpu7', [rep(1, undefined, [0.75, 3, 4.75, 6.25])])]).configs[0]
      ?.skew;
    assert.deepEqual(older, {
      kind: 'unknown',
      reason:
        "the traced reps of rank 1 do not say when they started on the host's clock (written before cuda-pipe recorded it)",
    });
    const untraced = ddpRank(1, 'gpu7', []);
    untraced.timeline = null;
    assert.deepEqual(mergeResults([rank0, untraced]).configs[0]?.skew, {
      kind: 'unknown',
      reason: 'rank 1 traced no collective (run without --no-tracing)',
    });
    const text = renderMerge(mergeResults([rank0, untraced]), makeStyle(undefined, { NO_COLOR: '1' }));
    assert.match(
      text,
      /^collective arrival skew: not comparable: rank 1 traced no collective \(run without --no-tracing\)\.$/m,
    );
  });

  it('does not pair ranks whose traced collectives differ in number, and says nothing for a config without collectives', () => {
    const short = ddpRank(1, 'gpu7', [rep(1, EPOCH, [1, 3, 5])]);
    assert.deepEqual(mergeResults([rank0, short]).configs[0]?.skew, {
      kind: 'unknown',
      reason: `${MODE}: the ranks traced 4 (rank 0), 3 (rank 1) collectives, which do not pair`,
    });
    const plain = (rank: number) => ddpRank(rank, 'gpu7', structuredClone(h200.timeline?.reps ?? []));
    const [config] = mergeResults([plain(0), plain(1)]).configs;
    assert.equal(config?.skew, null);
    assert.doesNotMatch(
      renderMerge(mergeResults([plain(0), plain(1)]), makeStyle(undefined, { NO_COLOR: '1' })),
      /skew/,
    );
  });

  it('`merge` prints the skew from rank files, and again from the one file its --json wrote, which keeps every rep’s start', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-skew-'));
    const files = [rank0, rank1].map((r) => {
      const path = join(dir, `rank${r.run.rank}.json`);
      writeFileSync(path, JSON.stringify(r));
      return path;
    });
    const all = join(dir, 'all.json');
    const out = runCli(['merge', ...files, '--json', all], { NO_COLOR: '1' });
    assert.equal(out.code, 0, out.stderr);
    const line = /^collective arrival skew, .*$/m;
    assert.match(
      out.stdout,
      /^collective arrival skew, .*: 4 all-reduces of 64 MiB\n {2}median 0\.250 ms, max 0\.500 ms; last: rank 0 1 time, rank 1 3 times$/m,
    );
    const again = runCli(['merge', all], { NO_COLOR: '1' });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout.match(line)?.[0], out.stdout.match(line)?.[0]);
    assert.match(again.stdout, /^last to arrive most often: rank 1, at 3 of 4 collectives$/m);
  });
});
