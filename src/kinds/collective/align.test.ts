import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StreamHandle } from '../../cuda/types.js';
import { PENDING, type Thunk } from '../api/index.js';
import { meetBeforeStart } from './align.js';

// Under a launcher the ranks meet on the GPU before each rep's start event (./align.ts): the call goes in behind the
// op before the start on the start's stream (the gate), so that the runner waits for a nonblocking communicator's
// enqueue before it records the start.

const S0 = 1n as StreamHandle;
const S1 = 2n as StreamHandle;

function recorder() {
  const calls: string[] = [];
  const thunk =
    (name: string, code = 0): Thunk =>
    () => {
      calls.push(name);
      return code;
    };
  return { calls, thunk };
}

describe('the ranks meeting before a rep', () => {
  it('issues the meeting after the gate and before the start event, on the start’s stream', () => {
    const { calls, thunk } = recorder();
    const met: StreamHandle[] = [];
    const thunks = meetBeforeStart(
      { thunks: [thunk('gate'), thunk('start'), thunk('body')], opStreams: [S0, S0, S1], startIndex: 1 },
      (stream) => {
        met.push(stream);
        return thunk('meet');
      },
    );
    for (const t of thunks) assert.equal(t(), 0);
    assert.deepEqual(calls, ['gate', 'meet', 'start', 'body']);
    assert.deepEqual(met, [S0]);
  });

  it('answers PENDING where the communicator finishes the enqueue on its own thread, so the start waits for it', () => {
    const { thunk } = recorder();
    const thunks = meetBeforeStart(
      { thunks: [thunk('gate'), thunk('start')], opStreams: [S0, S0], startIndex: 1 },
      () => thunk('meet', PENDING),
    );
    assert.equal(thunks[0]?.(), PENDING);
  });

  it('does not meet after a gate that failed', () => {
    const { calls, thunk } = recorder();
    const thunks = meetBeforeStart(
      { thunks: [thunk('gate', 700), thunk('start')], opStreams: [S0, S0], startIndex: 1 },
      () => thunk('meet'),
    );
    assert.equal(thunks[0]?.(), 700);
    assert.deepEqual(calls, ['gate']);
  });

  it('leaves a schedule alone whose start is its first op or follows another stream’s op', () => {
    const { thunk } = recorder();
    const first = [thunk('start'), thunk('body')];
    assert.equal(
      meetBeforeStart({ thunks: first, opStreams: [S0, S0], startIndex: 0 }, () => thunk('meet')),
      first,
    );
    const other = [thunk('wait'), thunk('start')];
    assert.equal(
      meetBeforeStart({ thunks: other, opStreams: [S1, S0], startIndex: 1 }, () => thunk('meet')),
      other,
    );
  });
});
