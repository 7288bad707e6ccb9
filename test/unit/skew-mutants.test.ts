import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { collectiveSkew, participantName, type RankSide, type Skew } from '../../src/compare/skew.js';
import type { RunResult } from '../../src/result/schema.js';
import type { TimelineOp, TracedRep } from '../../src/result/timeline.js';

// The arrival skew of collectives between ranks (src/compare/skew.ts), called directly on hand-made ranks: each
// rank's traced reps start at a chosen wall-clock time and reach each call at a chosen time after it. Times are
// multiples of 1/4 ms, exact in binary beside an epoch of 1.77e12 ms, so skews compare exactly.

const EPOCH = 1_767_225_600_000;
const MODE = 'overlapped:4x1:depth-first:chunk-per-stream';

type Op = Partial<TimelineOp> & { startMs: number };
const call = (startMs: number, chunk: number | null, extra: Partial<TimelineOp> = {}): Op => ({
  startMs,
  chunk,
  collective: 'allreduce',
  ...extra,
});

function rep(device: number, origin: number | undefined, ops: readonly Op[], mode = MODE): TracedRep {
  return {
    mode,
    device,
    totalMs: 10,
    issueMs: 0.1,
    ...(origin === undefined ? {} : { originEpochMs: origin }),
    streams: [{ id: 'comm', flags: 'non-blocking', priority: null }],
    ops: ops.map((op) => ({
      mode,
      device,
      stream: 'comm',
      kind: 'collective',
      buffer: 'grads',
      kernel: 'allreduce',
      bytes: 1024,
      endMs: op.startMs + 1,
      issuedMs: 0,
      ...op,
    })) as TimelineOp[],
  };
}

/** A rank's side: its Result holds its devices, its modes (one with a collective where `declares`) and its reps. */
function side(
  rank: number | null,
  reps: TracedRep[] | null,
  options: { host?: string; devices?: number; declares?: boolean; device?: number } = {},
): RankSide {
  const devices = Array.from({ length: options.devices ?? 1 }, (_, index) => ({ index }));
  const modes = options.declares ? [{}, { collective: { collective: 'allreduce', calls: 1, bytes: 1 } }] : [{}];
  const result = { devices, modes, ...(reps === null ? {} : { timeline: { reps } }) } as unknown as RunResult;
  return { result, host: options.host ?? 'gpu7', rank, device: { index: options.device ?? 0 } };
}

const starts = (device: number, origin: number | undefined, times: readonly number[], mode = MODE) =>
  rep(
    device,
    origin,
    times.map((t, chunk) => call(t, chunk)),
    mode,
  );

function measured(skew: Skew | null): Extract<Skew, { kind: 'measured' }> {
  assert.equal(skew?.kind, 'measured', JSON.stringify(skew));
  return skew as Extract<Skew, { kind: 'measured' }>;
}
const reason = (skew: Skew | null) => (skew?.kind === 'unknown' ? skew.reason : JSON.stringify(skew));

describe('which ranks the skew is measured for', { timeout: 5_000 }, () => {
  it('measures nothing for one rank on one GPU, and measures the GPUs of one process that drove two', () => {
    assert.equal(collectiveSkew([side(0, [starts(0, EPOCH, [1])])]), null);
    assert.equal(collectiveSkew([]), null);
    const both = side(0, [starts(0, EPOCH, [1, 2]), starts(1, EPOCH, [1.5, 2])], { devices: 2 });
    const skew = measured(collectiveSkew([both]));
    assert.deepEqual(
      skew.participants.map((p) => participantName(p)),
      ['rank 0 GPU 0', 'rank 0 GPU 1'],
    );
    assert.deepEqual(
      skew.modes[0]?.calls.map((c) => c.skewMs),
      [0.5, 0],
    );
  });

  it('measures nothing where no rank declared or traced a collective', () => {
    const kernels = (device: number) => rep(device, EPOCH, [call(1, 0, { kind: 'kernel', collective: undefined })]);
    assert.equal(collectiveSkew([side(0, [kernels(0)]), side(1, [kernels(1)])]), null);
    assert.equal(collectiveSkew([side(0, null), side(1, null)]), null);
  });

  it('says which rank traced no collective where one declared one', () => {
    const skew = collectiveSkew([side(0, null, { declares: true }), side(null, null, { device: 3 })]);
    assert.equal(reason(skew), 'rank 0, gpu7 GPU 3 traced no collective (run without --no-tracing)');
    const one = collectiveSkew([side(0, [starts(0, EPOCH, [1])]), side(1, null)]);
    assert.equal(reason(one), 'rank 1 traced no collective (run without --no-tracing)');
    const kernels = rep(0, EPOCH, [call(1, 0, { kind: 'kernel', collective: undefined })]);
    const kernelsOnly = collectiveSkew([side(0, [starts(0, EPOCH, [1])]), side(1, [kernels], { declares: true })]);
    assert.equal(reason(kernelsOnly), 'rank 1 traced no collective (run without --no-tracing)');
  });

  it('measures nothing for one rank on one GPU even where it declared collectives it did not trace', () => {
    assert.equal(collectiveSkew([side(0, null, { declares: true })]), null);
  });

  it('compares no wall clocks of different hosts', () => {
    const skew = collectiveSkew([
      side(0, [starts(0, EPOCH, [1])], { host: 'a' }),
      side(1, [starts(0, EPOCH, [1])], { host: 'b' }),
    ]);
    assert.equal(reason(skew), 'the ranks ran on 2 hosts (a, b), whose wall clocks are not one clock');
  });

  it('names the ranks whose reps with collectives have no wall-clock start, and no rep without collectives', () => {
    const skew = collectiveSkew([side(0, [starts(0, EPOCH, [1])]), side(1, [starts(0, undefined, [1])])]);
    assert.equal(
      reason(skew),
      "the traced reps of rank 1 do not say when they started on the host's clock (written before cuda-pipe recorded it)",
    );
    const kernelsOnly = rep(0, undefined, [call(1, 0, { kind: 'kernel', collective: undefined })], 'other');
    const dated = collectiveSkew([side(0, [starts(0, EPOCH, [1])]), side(1, [kernelsOnly, starts(0, EPOCH, [1])])]);
    assert.equal(measured(dated).modes.length, 1);
    assert.deepEqual(measured(dated).unpaired, []);
    const partly = collectiveSkew([
      side(0, [starts(0, EPOCH, [1]), starts(0, EPOCH, [1], 'b')]),
      side(1, [starts(0, EPOCH, [1]), starts(0, undefined, [1], 'b')]),
    ]);
    assert.match(reason(partly), /^the traced reps of rank 1 do not say when they started/);
  });
});

describe('the calls paired across the participants', { timeout: 5_000 }, () => {
  it('skews each call by the latest arrival less the earliest, and names the latest', () => {
    const skew = measured(
      collectiveSkew([side(0, [starts(0, EPOCH, [1, 3, 5])]), side(1, [starts(0, EPOCH + 0.5, [0.75, 2.5, 4.25])])]),
    );
    const [mode] = skew.modes;
    assert.deepEqual(
      mode?.calls.map((c) => [c.order, c.chunk, c.skewMs, c.last.who.rank.rank]),
      [
        [0, 0, 0.25, 1],
        [1, 1, 0, 0],
        [2, 2, 0.25, 0],
      ],
    );
    assert.deepEqual([mode?.medianMs, mode?.maxMs], [0.25, 0.25]);
    assert.deepEqual(
      mode?.last.map((l) => l.count),
      [2, 1],
    );
    assert.deepEqual(
      skew.mostOftenLast.who.map((w) => w.rank.rank),
      [0],
    );
    assert.deepEqual([skew.mostOftenLast.count, skew.mostOftenLast.of], [2, 3]);
    assert.deepEqual(skew.unpaired, []);
  });

  it("gives each call's collective and bytes, an all-reduce where the op names none", () => {
    const gather = (device: number, origin: number) =>
      rep(device, origin, [
        call(1, 0, { collective: 'allgather', bytes: 4096 }),
        call(2, 1, { collective: undefined }),
      ]);
    const skew = measured(collectiveSkew([side(0, [gather(0, EPOCH)]), side(1, [gather(0, EPOCH)])]));
    assert.deepEqual(
      skew.modes[0]?.calls.map((c) => [c.collective, c.bytes]),
      [
        ['allgather', 4096],
        ['allreduce', 1024],
      ],
    );
  });

  it('counts every mode toward the rank last most often, and names each rank of a tie', () => {
    const skew = measured(
      collectiveSkew([
        side(0, [starts(0, EPOCH, [1], 'a'), starts(0, EPOCH, [1], 'b')]),
        side(1, [starts(0, EPOCH, [2], 'a'), starts(0, EPOCH, [0.5], 'b')]),
      ]),
    );
    assert.deepEqual(
      skew.modes.map((m) => m.mode),
      ['a', 'b'],
    );
    assert.deepEqual(
      skew.mostOftenLast.who.map((w) => w.rank.rank),
      [0, 1],
    );
    assert.deepEqual([skew.mostOftenLast.count, skew.mostOftenLast.of], [1, 2]);
  });

  it('keeps one participant per device of a rank however many modes it traced, in device order', () => {
    const other = side(0, [starts(0, EPOCH, [1])]);
    const two = side(1, [starts(1, EPOCH, [1]), starts(0, EPOCH, [1]), starts(1, EPOCH, [1], 'b')], { devices: 2 });
    const skew = measured(collectiveSkew([other, two]));
    assert.deepEqual(
      skew.participants.map((p) => participantName(p)),
      ['rank 0', 'rank 1 GPU 0', 'rank 1 GPU 1'],
    );
    assert.deepEqual(skew.unpaired, ['b: not traced by rank 0, rank 1 GPU 0']);
  });

  it('measures nothing where one participant alone traced its collectives', () => {
    const alone = side(0, [starts(1, EPOCH, [1])], { devices: 2 });
    assert.equal(collectiveSkew([alone]), null);
  });
});

describe('calls that do not pair', { timeout: 5_000 }, () => {
  it('says the ranks traced different numbers of collectives, each by name', () => {
    const skew = collectiveSkew([side(0, [starts(0, EPOCH, [1, 2])]), side(null, [starts(0, EPOCH, [1])])]);
    assert.equal(reason(skew), `${MODE}: the ranks traced 2 (rank 0), 1 (gpu7 GPU 0) collectives, which do not pair`);
  });

  it('names the first call whose bucket or collective differs', () => {
    const of = (second: Op) => rep(0, EPOCH, [call(1, 0), second, call(3, 2)]);
    const bucket = collectiveSkew([side(0, [of(call(2, 1))]), side(1, [of(call(2, 5))])]);
    const text = `${MODE}: the ranks' collective 2 is of different buckets or calls, so the sequences do not pair`;
    assert.equal(reason(bucket), text);
    const kind = collectiveSkew([side(0, [of(call(2, 1))]), side(1, [of(call(2, 1, { collective: 'allgather' }))])]);
    assert.equal(reason(kind), text);
  });

  it('measures the modes that pair and lists the ones that do not', () => {
    const skew = measured(
      collectiveSkew([
        side(0, [starts(0, EPOCH, [1]), starts(0, EPOCH, [1, 2], 'b')]),
        side(1, [starts(0, EPOCH, [1.25]), starts(0, EPOCH, [1], 'b')]),
      ]),
    );
    assert.deepEqual(
      skew.modes.map((m) => m.mode),
      [MODE],
    );
    assert.deepEqual(skew.unpaired, ['b: the ranks traced 2 (rank 0), 1 (rank 1) collectives, which do not pair']);
  });
});
