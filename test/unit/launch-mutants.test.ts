import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkOneLaunch, programNote, programShape, SAME_PROGRAM } from '../../src/analysis/launch.js';
import { UsageError } from '../../src/errors.js';
import type { GpuEvent, ParsedTrace } from '../../src/traces/events.js';
import { gpuEvent } from '../helpers/gpu-event.js';

// Which traces can be the ranks of one launch, and when --ab's two sides look like two programs
// (src/analysis/launch.ts), called directly on traces built here.

const DEADLINE = { timeout: 5_000 };

function event(device: number, start: number, end: number, name = 'gemm', kind: GpuEvent['kind'] = 'kernel'): GpuEvent {
  return gpuEvent({ device, kind, start, end, name });
}

function trace(file: string, rank: number | null, gpu: GpuEvent[], extra: Partial<ParsedTrace> = {}): ParsedTrace {
  return { file, format: 'kineto', rank, gpu, host: [], steps: [], notes: [], ...extra };
}

/** The UsageError checkOneLaunch throws, or null. */
function refusal(traces: ParsedTrace[], side?: string): UsageError | null {
  try {
    checkOneLaunch(traces, side);
    return null;
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    return error;
  }
}

const AB_HINT =
  'To compare two runs of a program, before and after a change: cuda-pipe analyze --ab A.json B.json ' +
  '(several ranks a side: --ab A0 A1 -- B0 B1).';

describe('checkOneLaunch: traces that cannot be the ranks of one launch', () => {
  it('refuses one rank twice, naming both files and the side', DEADLINE, () => {
    const error = refusal([trace('a.json', 1, [event(0, 0, 1)]), trace('b.json', 1, [event(1, 0, 1)])], "A's traces");
    assert.equal(
      error?.message,
      "a.json and b.json are both rank 1 (their distributedInfo.rank): A's traces are read as the ranks of one " +
        'launch, each rank once.',
    );
    assert.equal(error.hint, `Give each rank's trace once. ${AB_HINT}`);
  });

  it('takes ranks on one GPU index for ranks of other hosts, and traces without a rank on other GPUs', DEADLINE, () => {
    assert.equal(refusal([trace('a.json', 0, [event(0, 0, 1)]), trace('b.json', 1, [event(0, 0, 1)])]), null);
    assert.equal(refusal([trace('a.json', null, [event(0, 0, 1)]), trace('b.json', null, [event(1, 0, 1)])]), null);
  });

  it('refuses two traces on one GPU of which neither names its rank', DEADLINE, () => {
    const error = refusal([trace('a.json', null, [event(2, 0, 1)]), trace('b.json', null, [event(2, 0.5, 1)])]);
    assert.equal(
      error?.message,
      'a.json and b.json both ran on GPU 2, and neither names its rank: the traces are read as the ranks of one ' +
        'launch, which run on GPUs of their own (or say their rank, as PyTorch does in distributedInfo); these look ' +
        'like two runs of a program.',
    );
    assert.equal(error.hint, AB_HINT);
  });

  it('names the trace that gives no rank, first or second', DEADLINE, () => {
    const first = refusal([trace('a.json', null, [event(0, 0, 1)]), trace('b.json', 3, [event(0, 0, 1)])]);
    assert.match(first?.message ?? '', /both ran on GPU 0, and a\.json names no rank: /);
    const second = refusal([trace('a.json', 3, [event(0, 0, 1)]), trace('b.json', null, [event(0, 0, 1)])]);
    assert.match(second?.message ?? '', /both ran on GPU 0, and b\.json names no rank: /);
  });

  it('checks every pair, not only the first two traces', DEADLINE, () => {
    const error = refusal([
      trace('a.json', null, [event(0, 0, 1)]),
      trace('b.json', null, [event(1, 0, 1)]),
      trace('c.json', null, [event(1, 0, 1)]),
    ]);
    assert.match(error?.message ?? '', /^b\.json and c\.json both ran on GPU 1/);
  });

  it('refuses ranks whose GPU work does not overlap, giving the gap and how long each lasted', DEADLINE, () => {
    // Given later first: the message names the earlier trace first.
    const error = refusal([
      trace('late.json', 1, [event(1, 7, 8)]),
      trace('early.json', 0, [event(0, 2, 3), event(0, 1, 2)]),
    ]);
    assert.equal(
      error?.message,
      'early.json ends 4.000 ms before late.json starts: the traces are read as the ranks of one launch, which run ' +
        'at the same time, and these do not overlap (GPU work 2.000 ms and 1.000 ms long).',
    );
    assert.equal(
      error.hint,
      `${AB_HINT} Ranks on hosts whose clocks differ by more than a trace lasts need them set (NTP) to be read together.`,
    );
  });

  it('of several traces apart in time, names the first pair in the order given', DEADLINE, () => {
    const error = refusal([
      trace('a.json', 0, [event(0, 0, 1)]),
      trace('b.json', 1, [event(1, 5, 6)]),
      trace('c.json', 2, [event(2, 10, 11)]),
    ]);
    assert.match(error?.message ?? '', /^a\.json ends 4\.000 ms before b\.json starts/);
  });

  it('gives gaps of a second or more in seconds', DEADLINE, () => {
    const error = refusal([trace('a.json', 0, [event(0, 0, 1500)]), trace('b.json', 1, [event(1, 3000, 3200)])]);
    assert.match(
      error?.message ?? '',
      /^a\.json ends 1\.5 s before b\.json starts: .*\(GPU work 1\.5 s and 200\.0 ms long\)\.$/,
    );
  });

  it('a gap of exactly a second reads 1.0 s; one just under, in ms', DEADLINE, () => {
    const at = (gap: number) =>
      refusal([trace('a.json', 0, [event(0, 0, 1)]), trace('b.json', 1, [event(1, 1 + gap, 2 + gap)])])?.message;
    assert.match(at(1000) ?? '', /^a\.json ends 1\.0 s before b\.json starts/);
    assert.match(at(999.5) ?? '', /^a\.json ends 999\.5 ms before b\.json starts/);
  });

  it('takes traces that touch, overlap, or lack GPU work for one launch', DEADLINE, () => {
    assert.equal(refusal([trace('a.json', 0, [event(0, 0, 2)]), trace('b.json', 1, [event(1, 2, 3)])]), null);
    assert.equal(refusal([trace('a.json', 0, [event(0, 0, 2)]), trace('b.json', 1, [event(1, 1, 3)])]), null);
    assert.equal(refusal([trace('a.json', 0, [event(0, 0, 2)]), trace('b.json', 1, [])]), null);
  });

  it("counts each trace's times from its clock base where every trace gives one", DEADLINE, () => {
    // Equal times on bases 10 s apart do not overlap; bases that bring them together do.
    const apart = refusal([
      trace('a.json', 0, [event(0, 0, 1)], { clockBaseMs: 0 }),
      trace('b.json', 1, [event(1, 0, 1)], { clockBaseMs: 10_000 }),
    ]);
    assert.match(apart?.message ?? '', /^a\.json ends 10\.0 s before b\.json starts/);
    const together = refusal([
      trace('a.json', 0, [event(0, 100, 101)], { clockBaseMs: 0 }),
      trace('b.json', 1, [event(1, 0, 1)], { clockBaseMs: 100.5 }),
    ]);
    assert.equal(together, null);
  });

  it('takes the traces on their own times where one gives no clock base', DEADLINE, () => {
    const error = refusal([
      trace('a.json', 0, [event(0, 0, 1)], { clockBaseMs: 10_000 }),
      trace('b.json', 1, [event(1, 0, 1)], { clockBaseMs: null }),
    ]);
    assert.equal(error, null);
  });

  it('does not check the times of formats whose clock is their own', DEADLINE, () => {
    const own = [
      trace('a.json', 0, [event(0, 0, 1)], { format: 'cuda-pipe' }),
      trace('b.json', 1, [event(1, 50, 51)], { format: 'nsys' }),
    ];
    assert.equal(refusal(own), null);
  });

  it('has nothing to check with one trace', DEADLINE, () => {
    assert.equal(refusal([trace('a.json', null, [event(0, 0, 1)])]), null);
  });
});

describe('programShape and programNote: whether --ab compares one program', () => {
  it('takes the kernel names and the GPU ops a step holds over every trace of a side', DEADLINE, () => {
    const shape = programShape(
      [
        trace('a.json', 0, [event(0, 0, 1, 'gemm'), event(0, 1, 2, 'copy', 'memcpy'), event(0, 2, 3, 'relu')]),
        trace('b.json', 1, [event(1, 0, 1, 'gemm')]),
      ],
      2,
    );
    assert.deepEqual([...shape.kernels].sort(), ['gemm', 'relu']);
    assert.equal(shape.opsPerStep, 2);
    assert.equal(programShape([trace('a.json', 0, [event(0, 0, 1)])], 0).opsPerStep, null);
  });

  const shape = (kernels: string[], opsPerStep: number | null) => ({ kernels: new Set(kernels), opsPerStep });

  it('one program: half the kernel names shared and at most twice the ops a step', DEADLINE, () => {
    assert.equal(SAME_PROGRAM.sharedKernels, 0.5);
    assert.equal(SAME_PROGRAM.opsPerStepRatio, 2);
    assert.equal(programNote(shape(['a', 'b'], 10), shape(['a', 'b', 'c', 'd'], 20)), null);
    assert.equal(programNote(shape([], 10), shape([], 5)), null);
  });

  it('names too few kernel names in common', DEADLINE, () => {
    assert.equal(
      programNote(shape(['a', 'b', 'c'], 10), shape(['a', 'd'], 10)),
      'A and B do not look like one program: they share 25% of their kernel names (1 of 4; a change to one program ' +
        'keeps most). Their verdicts compare the step times of different work, not a change to one program.',
    );
  });

  it('names a step of one side holding more than twice the GPU work of the other, either way round', DEADLINE, () => {
    const words = 'a step of A holds 10 GPU ops and one of B 25 (2.5 times as many)';
    assert.ok(programNote(shape(['a'], 10), shape(['a'], 25))?.includes(`one program: ${words}. Their`));
    assert.match(
      programNote(shape(['a'], 25), shape(['a'], 10)) ?? '',
      /A holds 25 GPU ops and one of B 10 \(2\.5 times/,
    );
  });

  it('gives both reasons, joined', DEADLINE, () => {
    assert.equal(
      programNote(shape(['a'], 1), shape(['b'], 3)),
      'A and B do not look like one program: they share 0% of their kernel names (0 of 2; a change to one program ' +
        'keeps most); a step of A holds 1 GPU ops and one of B 3 (3.0 times as many). Their verdicts compare the ' +
        'step times of different work, not a change to one program.',
    );
  });

  it('compares no step sizes where a side has no steps or no ops', DEADLINE, () => {
    assert.equal(programNote(shape(['a'], null), shape(['a'], 30)), null);
    assert.equal(programNote(shape(['a'], 10), shape(['a'], null)), null);
    assert.equal(programNote(shape(['a'], 0), shape(['a'], 30)), null);
    assert.equal(programNote(shape(['a'], 30), shape(['a'], 0)), null);
  });
});
