import assert from 'node:assert/strict';
import { fakeSite } from '../../test/helpers/kind-site.js';
import { describe, it } from 'node:test';
import { runtime as hostRuntime } from './host/runtime.js';
import {
  type ChunkWork,
  engineRows,
  engineSharing,
  type KindRuntime,
  type OpenContext,
  type RuntimePrimitives,
  issueWorkOp,
  opBytes,
  phaseOps,
  STAGE_KINDS,
  STAGES,
  stageOf,
  type WorkOp,
} from '../kinds/index.js';

const work: ChunkWork = {
  buffers: [
    { name: 'x', role: 'in', elementBytes: 4, itemSize: 1 },
    { name: 'y', role: 'out', elementBytes: 2, itemSize: 1 },
    { name: 'z', role: 'inout', elementBytes: 8, itemSize: 1 },
    { name: 't', role: 'scratch', elementBytes: 4, itemSize: 1 },
  ],
  compute: [
    { stage: 'kernel', label: 'a', spec: null },
    { stage: 'kernel', label: 'b', spec: null },
  ],
  host: 'checksum',
  range: { first: 100, count: 10 },
  deviceFirst: 20,
  stream: 's1',
  chunk: 3,
};

const SHIPPED: readonly string[] = ['h2d', 'kernel', 'gemm', 'matmul', 'collective', 'd2h', 'host', 'peer'];

describe('the table of stage kinds', () => {
  // The kinds this repository ships, in the list's order; a kind added to the list (the echo fixture kind of
  // test/unit/kinds-fixture.test.ts) comes after them and changes nothing of theirs.
  it('lists each kind once, with its own letter and colour, in the order pictures draw them', () => {
    assert.deepEqual(STAGES.slice(0, SHIPPED.length), SHIPPED);
    assert.equal(new Set(STAGES).size, STAGES.length);
    assert.equal(new Set(STAGE_KINDS.map((s) => s.look.letter)).size, STAGE_KINDS.length);
    assert.equal(new Set(STAGE_KINDS.map((s) => s.look.colour)).size, STAGE_KINDS.length);
  });

  it('plans a chunk phase by phase: loads of in and inout buffers, the kernels in order, stores then the host function', () => {
    const load = phaseOps('load', work);
    assert.deepEqual(load, [
      {
        kind: 'copy',
        stream: 's1',
        direction: 'h2d',
        buffer: 'x',
        hostOffset: 400,
        deviceOffset: 80,
        bytes: 40,
        chunk: 3,
      },
      {
        kind: 'copy',
        stream: 's1',
        direction: 'h2d',
        buffer: 'z',
        hostOffset: 800,
        deviceOffset: 160,
        bytes: 80,
        chunk: 3,
      },
    ]);
    assert.deepEqual(
      phaseOps('compute', work).map((op) =>
        op.kind === 'kernel' ? [op.kernel, op.first, op.count, op.deviceFirst] : op.kind,
      ),
      [
        ['a', 100, 10, 20],
        ['b', 100, 10, 20],
      ],
    );
    assert.deepEqual(
      phaseOps('store', work).map((op) => (op.kind === 'copy' ? `${op.direction} ${op.buffer} ${op.bytes}` : op.kind)),
      ['d2h y 20', 'd2h z 80', 'host'],
    );
    assert.deepEqual(
      phaseOps('store', { ...work, host: null }).map((op) => op.kind),
      ['copy', 'copy'],
    );
  });

  it('counts the bytes each way and between devices from the kinds that move them', () => {
    const peer: WorkOp = {
      kind: 'peer',
      stream: 's0',
      buffer: 'x',
      from: 0,
      to: 1,
      deviceOffset: 0,
      bytes: 7,
      chunk: null,
    };
    assert.deepEqual(
      opBytes([
        ...phaseOps('load', work),
        ...phaseOps('compute', work),
        ...phaseOps('store', work),
        peer,
        { kind: 'record' },
      ]),
      {
        h2d: 120,
        d2h: 100,
        peer: 7,
        collective: 0,
      },
    );
  });

  it('finds each op its stage kind, a copy by its direction', () => {
    const [load] = phaseOps('load', work);
    const [store] = phaseOps('store', work);
    assert.equal(stageOf(load!).id, 'h2d');
    assert.equal(stageOf(store!).id, 'd2h');
    assert.equal(stageOf({ kind: 'host', stream: 's', name: 'checksum', chunk: null }).id, 'host');
  });

  it('issues each op through the primitive of its kind, and only host calls carry a tag', async () => {
    const called: string[] = [];
    const call = (what: string) => () => {
      called.push(what);
      return 0;
    };
    const primitives: RuntimePrimitives = {
      copy: (spec) => call(`copy ${spec.direction} ${spec.buffer}`),
      peerCopy: (spec) => call(`peer ${spec.from}>${spec.to}`),
      kernel: (spec) => call(`kernel ${spec.kernel}`),
    };
    // The host stage's runtime, on the JS thread with the bare callback, issues a host function on the op's stream.
    const host = await hostRuntime.open({
      plan: { host: { name: 'empty', thread: 'js', function: 'empty' }, buffers: [] },
      hostBuffers: {},
    } as unknown as OpenContext<never>);
    const runtimes = new Map([['host', host as KindRuntime]] as const);
    const site = { ...fakeSite(), hostCall: () => ({ issue: call('host'), hostTag: 9 }) };
    const ops = [...phaseOps('load', work), ...phaseOps('compute', work), ...phaseOps('store', work)];
    const issued = ops.map((op) => issueWorkOp(op, primitives, runtimes, site));
    for (const { issue } of issued) assert.equal(issue(), 0);
    assert.deepEqual(called, ['copy h2d x', 'copy h2d z', 'kernel a', 'kernel b', 'copy d2h y', 'copy d2h z', 'host']);
    assert.deepEqual(
      issued.map((i) => i.hostTag),
      [null, null, null, null, null, null, 9],
    );
  });

  it('gives a device with one copy engine one copy track for both directions, and two tracks with two', () => {
    const shipped = (copyEngines: number) =>
      engineRows(copyEngines)
        .map((r) => [r.row, r.name, r.stages.filter((id) => SHIPPED.includes(id))] as const)
        .filter(([, , stages]) => stages.length);
    assert.deepEqual(shipped(2), [
      [1000, 'H2D copy engine', ['h2d']],
      [2000, 'D2H copy engine', ['d2h']],
      [3000, 'SMs', ['kernel', 'gemm', 'matmul']],
      [3500, 'communication', ['collective']],
      [4000, 'host ops', ['host']],
      [5000, 'peer copies', ['peer']],
    ]);
    assert.deepEqual(shipped(1), [
      [1000, 'copy engine', ['h2d', 'd2h']],
      [3000, 'SMs', ['kernel', 'gemm', 'matmul']],
      [3500, 'communication', ['collective']],
      [4000, 'host ops', ['host']],
      [5000, 'peer copies', ['peer']],
    ]);
  });

  it('says which kinds queue behind each other on an engine: copies share one where the device has one copy engine', () => {
    assert.deepEqual(
      [...engineSharing(2)],
      [
        ['h2d', ['h2d']],
        ['d2h', ['d2h']],
        ['peer', ['peer']],
      ],
    );
    const one = engineSharing(1);
    assert.deepEqual(one.get('h2d'), ['h2d', 'd2h']);
    assert.equal(one.get('h2d'), one.get('d2h'));
    assert.equal(one.get('kernel'), undefined);
  });
});
