import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { parseQuantity } from '../../src/config/units.js';
import { UsageError } from '../../src/errors.js';

const BASE = `name: t
buffers:
  x: { type: float32, count: 1000, role: in }
  y: { type: float32, size: 4000B, role: out }
kernels:
  - source: scale.cu
    entry: scale
    args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }]
pipeline: { chunks: 3, streams: 2 }
`;

function usageError(text: string, overrides = {}): UsageError {
  try {
    parseConfigText(text, '/cfg/test.yaml', overrides);
  } catch (error) {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the config to be rejected');
}

describe('sizes and counts with units', () => {
  it('reads binary and SI prefixes, with B for bytes only', () => {
    assert.equal(parseQuantity('256MiB', 'bytes'), 268435456);
    assert.equal(parseQuantity('64Mi', 'count'), 67108864);
    assert.equal(parseQuantity('4M', 'count'), 4000000);
    assert.equal(parseQuantity('1.5KiB', 'bytes'), 1536);
    assert.equal(parseQuantity(4096, 'count'), 4096);
    assert.deepEqual(parseQuantity('64MiB', 'count'), {
      error: '"64MiB" is a byte size, but an element count is expected (drop the "B")',
    });
    assert.match((parseQuantity('lots', 'bytes') as { error: string }).error, /not a size/);
    assert.match((parseQuantity('1.5', 'count') as { error: string }).error, /not a whole number/);
  });
});

describe('config loading', () => {
  it('resolves sizes, defaults and roles into a typed config', () => {
    const { config } = parseConfigText(BASE, '/cfg/test.yaml');
    assert.equal(config.elements, 1000);
    assert.deepEqual(
      config.buffers.map((b) => [b.name, b.bytes, b.role, b.hostMemory]),
      [
        ['x', 4000, 'in', 'pinned'],
        ['y', 4000, 'out', 'pinned'],
      ],
    );
    assert.deepEqual(config.pipeline.orders, ['depth-first']);
    assert.deepEqual(config.repetitions, {
      warmup: 3,
      warmupTime: 0,
      minReps: 10,
      maxReps: 2000,
      maxNoise: 0.5,
      maxTime: 3,
    });
    assert.deepEqual(config.kernels[0]?.args, [
      { kind: 'buffer', buffer: 'x' },
      { kind: 'buffer', buffer: 'y' },
      { kind: 'chunk-elements' },
      { kind: 'scalar', type: 'float32', value: 2 },
    ]);
    assert.equal(config.kernels[0]?.label, 'scale');
  });

  it('lets flags override the pipeline and repetitions', () => {
    const { config } = parseConfigText(BASE, '/cfg/test.yaml', {
      streams: 8,
      chunks: 10,
      order: 'breadth-first',
      reps: 3,
      warmup: 0,
      device: 1,
      maxNoise: 1,
      maxTime: 10,
      minReps: 5,
      warmupTime: 50,
    });
    assert.equal(config.pipeline.streams, 8);
    assert.equal(config.pipeline.chunks, 10);
    assert.deepEqual(config.pipeline.orders, ['breadth-first']);
    assert.deepEqual(config.repetitions, {
      warmup: 0,
      warmupTime: 50,
      reps: 3,
      minReps: 5,
      maxReps: 2000,
      maxNoise: 1,
      maxTime: 10,
    });
    assert.equal(config.device, 1);
  });

  it('blames a bad value that came from a flag on the flag, not on the line it replaced', () => {
    const error = usageError(BASE, { chunks: 999999999 });
    assert.match(error.message, /^--chunks 999999999: 999999999 chunks is more than the buffers' 1000 elements\.$/);
    assert.doesNotMatch(error.message, /test\.yaml/);
    const fromFile = usageError(BASE.replace('chunks: 3', 'chunks: 1001'));
    assert.match(fromFile.message, /^\/cfg\/test\.yaml:9:\d+: 1001 chunks/);
  });

  it('names the flag of a value the schema rejects', () => {
    const error = usageError(BASE, { warmup: -1 });
    assert.match(error.message, /--warmup -1: repetitions\.warmup: /);
  });

  it('names file, line and column of a YAML syntax error', () => {
    const error = usageError('buffers:\n  x: { type: float32\n  y: 1\n');
    assert.match(error.message, /^\/cfg\/test\.yaml:\d+:\d+: YAML syntax error/);
  });

  it('rejects an unknown field at its own position, naming its path', () => {
    const error = usageError(
      BASE.replace('pipeline: { chunks: 3, streams: 2 }', 'pipeline: { chunks: 3, streams: 2, strems: 4 }'),
    );
    assert.match(error.message, /\/cfg\/test\.yaml:9:36: unknown field "pipeline\.strems"/);
  });

  it('says what was expected for a wrong value, with the field path', () => {
    const error = usageError(BASE.replace('type: float32, count: 1000', 'type: float24, count: 1000'));
    assert.match(error.message, /test\.yaml:3:\d+: buffers\.x\.type: Invalid option: expected one of "float32"\|/);
  });

  it('explains the accepted forms of a kernel argument', () => {
    const error = usageError(BASE.replace('{ float32: 2 }', '{ float: 2 }'));
    assert.match(error.message, /kernels\[0\]\.args\[3\]: expected \{ buffer: NAME \}/);
  });

  it('rejects more chunks than elements, and says how many are possible', () => {
    const error = usageError(BASE.replace('chunks: 3', 'chunks: 1001'));
    assert.match(error.message, /1001 chunks is more than the buffers' 1000 elements/);
    assert.match(error.hint ?? '', /at most 1000 chunks/);
  });

  it('rejects zero and negative sizes', () => {
    assert.match(usageError(BASE.replace('count: 1000', 'count: 0')).message, /buffer "x" has no elements/);
    assert.match(usageError(BASE.replace('count: 1000', 'count: -5')).message, /buffers\.x\.count/);
  });

  it('rejects a byte size that is not a whole number of elements', () => {
    assert.match(
      usageError(BASE.replace('size: 4000B', 'size: 4002B')).message,
      /size 4002 bytes is not a multiple of the float32 element size \(4 bytes\)/,
    );
  });

  it('rejects buffers of different element counts, since chunks are shared ranges', () => {
    assert.match(
      usageError(BASE.replace('size: 4000B', 'size: 8000B')).message,
      /"y" has 2000 elements but "x" has 1000/,
    );
  });

  it('rejects an argument naming an unknown buffer and lists the known ones', () => {
    const error = usageError(BASE.replace('{ buffer: y }', '{ buffer: z }'));
    assert.equal(error.message, '/cfg/test.yaml:8:27: unknown buffer "z".');
    assert.match(error.hint ?? '', /x, y/);
  });

  it('needs exactly one of count and size', () => {
    assert.match(
      usageError(BASE.replace('count: 1000, role: in', 'count: 1000, size: 4000B, role: in')).message,
      /exactly one of count/,
    );
  });

  it('accepts a list of issue orders and keeps the first as the headline', () => {
    const { config } = parseConfigText(
      BASE.replace('streams: 2 }', 'streams: 2, order: [breadth-first, depth-first] }'),
      '/cfg/t.yaml',
    );
    assert.deepEqual(config.pipeline.orders, ['breadth-first', 'depth-first']);
  });
});

describe('values that pass the types but cannot work', () => {
  it('refuses pipeline.align: 0, which the planner would divide by', () => {
    const error = usageError(BASE.replace('streams: 2 }', 'streams: 2, align: 0 }'));
    assert.match(error.message, /test\.yaml:9:\d+: pipeline\.align: align is a row length in elements: 1 or more/);
  });

  it('names the allowed values of union fields instead of "Invalid input"', () => {
    assert.match(
      usageError(BASE.replace('streams: 2 }', 'streams: 2, order: sideways }')).message,
      /pipeline\.order: expected depth-first or breadth-first, or a list of them, got "sideways"/,
    );
    assert.match(
      usageError(BASE.replace('entry: scale', 'entry: scale\n    grid: lots')).message,
      /kernels\[0\]\.grid: expected auto, cover or a whole number of blocks \(1 or more\), got "lots"/,
    );
    assert.match(
      usageError(BASE.replace('size: 4000B', 'size: true')).message,
      /buffers\.y\.size: expected a size such as "256MiB" or a number of bytes, got true/,
    );
    assert.match(
      usageError(BASE.replace('count: 1000', 'count: [1]')).message,
      /buffers\.x\.count: expected a count such as "64Mi" or a whole number, got \[1\]/,
    );
  });
});

describe('unknown fields', () => {
  it('suggest the nearest known field of the same object', () => {
    const error = usageError(BASE.replace('pipeline: { chunks: 3, streams: 2 }', 'pipeline: { chunk: 3, strems: 2 }'));
    assert.match(error.message, /test\.yaml:9:13: unknown field "pipeline\.chunk"; did you mean "chunks"\?/);
    assert.match(error.message, /unknown field "pipeline\.strems"; did you mean "streams"\?/);
    assert.match(
      usageError(BASE.replace('role: in }', 'role: in, hostmemory: pinned }')).message,
      /"buffers\.x\.hostmemory"; did you mean "hostMemory"\?/,
    );
  });

  it('say where a field put at the top level belongs', () => {
    assert.match(
      usageError(`${BASE}chunks: 4\n`).message,
      /unknown field "chunks"; it belongs under pipeline \(pipeline\.chunks\)/,
    );
  });

  it('suggest nothing for a name unlike any field', () => {
    assert.match(
      usageError(BASE.replace('role: in }', 'role: in, colour: red }')).message,
      /unknown field "buffers\.x\.colour"$/m,
    );
  });
});

describe('file errors in words', () => {
  it('turns errno codes into words, and keeps unknown codes as they are', async () => {
    const { describeFileError } = await import('../../src/files/errno.js');
    const errno = (code: string) => Object.assign(new Error('x'), { code });
    assert.equal(describeFileError(errno('ENOENT')), 'no such file');
    assert.equal(describeFileError(errno('EACCES')), 'permission denied');
    assert.equal(describeFileError(errno('EISDIR')), 'is a folder');
    assert.equal(describeFileError(errno('ENOTDIR')), 'a part of the path is not a folder');
    assert.equal(describeFileError(errno('EWEIRD')), 'EWEIRD');
    assert.equal(describeFileError(new Error('plain')), 'plain');
  });
});
