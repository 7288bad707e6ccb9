import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { loadConfigFile } from '../../src/config/load.js';
import {
  ELEMENT_TYPES,
  HOST_MEMORY_KINDS,
  ISSUE_ORDERS,
  SCALAR_TYPES as SCALAR_ARG_TYPES,
} from '../../src/vocabulary.js';
import { UsageError } from '../../src/errors.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { buildPlan } from '../../src/plan/build.js';
import { packageRoot } from '../../src/paths.js';
import { runCli } from '../helpers/cli.js';

// For any file, the loader returns a config or throws a UsageError (exit 2), and does so quickly: never another
// error (exit 70), never a hang. The generators aim at the places that have broken before: odd scalars, wrong
// types in known fields, unknown fields, aliases, deep nesting and text that is barely YAML.

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-property-'));
const CASE_TIME_LIMIT_MS = 3000;
let fileIndex = 0;

function writeCase(text: string): string {
  fileIndex += 1;
  const path = join(dir, `case-${fileIndex}.yaml`);
  writeFileSync(path, text);
  return path;
}

/** Loads (and, when it loads, resolves and plans) a config; anything but a UsageError fails the property. */
function loadsOrRefuses(text: string, plan = false): void {
  const path = writeCase(text);
  const started = performance.now();
  try {
    const { config, locate } = loadConfigFile(path);
    if (plan) buildPlan(config, resolveKernels(config, locate), { gate: false });
  } catch (error) {
    if (!(error instanceof UsageError)) {
      throw new Error(
        `not a UsageError for\n${text.slice(0, 2000)}\n→ ${error instanceof Error ? error.stack : String(error)}`,
      );
    }
    assert.ok(error.message.length > 0);
  }
  const ms = performance.now() - started;
  assert.ok(ms < CASE_TIME_LIMIT_MS, `took ${ms.toFixed(0)} ms`);
}

const oddNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 0.5, 2 ** 31, 2 ** 32, 2 ** 53 + 1, 2 ** 64, 1e308, -0, Number.MAX_SAFE_INTEGER),
);
const oddString = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('', '256MiB', '64Mi', '1.5KiB', 'lots', '-1', '0x10', '1e3', '~', 'null', '*a', '&a', '{', '- x'),
);
const scalar = fc.oneof(oddNumber, oddString, fc.boolean(), fc.constant(null));
const anyValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 4 }),
  ),
})).value;
/** A plausible value for a field most of the time, anything at all sometimes. */
const mostly = <T>(plausible: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 4, arbitrary: plausible }, { weight: 1, arbitrary: anyValue });

// Every code point, lone surrogates included: what `unit: 'binary'` draws (an index into one range, 0 to 0x10FFFF),
// without the map back from each of the 1.1 million values to its index that fast-check builds on first use to shrink
// a value it did not make (1.4 s of CPU a process, for a failure that never needs it).
const anyCodePoint = fc.integer({ min: 0, max: 0x10ffff }).map((codePoint) => String.fromCodePoint(codePoint));

const bufferName = fc.oneof(fc.constantFrom('x', 'y', 'scratch', 'in-1'), fc.string({ maxLength: 6 }));
const buffer = fc.record(
  {
    type: mostly(fc.constantFrom(...ELEMENT_TYPES, 'float24')),
    count: mostly(fc.oneof(fc.integer({ min: -2, max: 5000 }), fc.constantFrom('4Ki', '1M', '1000'))),
    size: mostly(fc.oneof(fc.integer({ min: 0, max: 20000 }), fc.constantFrom('16KiB', '4000B'))),
    role: mostly(fc.constantFrom('in', 'out', 'inout', 'scratch')),
    init: mostly(
      fc.oneof(
        fc.record({ kind: fc.constant('random'), seed: oddNumber }),
        fc.record({ kind: fc.constant('ramp'), start: oddNumber, step: oddNumber }),
      ),
    ),
    hostMemory: mostly(fc.constantFrom(...HOST_MEMORY_KINDS)),
  },
  { requiredKeys: [] },
);
const arg = fc.oneof(
  fc.record({ buffer: mostly(bufferName) }),
  fc.record({ chunk: mostly(fc.constantFrom('elements', 'offset')) }),
  fc
    .constantFrom(...SCALAR_ARG_TYPES)
    .chain((type) =>
      fc.record({ [type]: mostly(fc.oneof(oddNumber, fc.constantFrom('123', '-9223372036854775809'))) }),
    ),
  anyValue,
);
const kernel = fc.record(
  {
    name: mostly(fc.string({ maxLength: 6 })),
    source: mostly(fc.constantFrom('scale.cu', 'fma_loop.cu', 'saxpy.cu', 'missing.cu', '/dev/null', '.')),
    entry: mostly(fc.constantFrom('scale', 'copy32', 'fma_loop', 'saxpy', 'nope')),
    block: mostly(fc.integer({ min: -1, max: 2048 })),
    grid: mostly(fc.oneof(fc.constantFrom('auto', 'cover'), fc.integer({ min: -1, max: 100000 }))),
    options: mostly(fc.array(fc.string({ maxLength: 10 }), { maxLength: 2 })),
    args: mostly(fc.array(arg, { maxLength: 5 })),
  },
  { requiredKeys: [] },
);
const pipeline = fc.record(
  {
    chunks: mostly(fc.integer({ min: -1, max: 5000 })),
    streams: mostly(fc.integer({ min: 0, max: 64 })),
    order: mostly(
      fc.oneof(fc.constantFrom(...ISSUE_ORDERS), fc.array(fc.constantFrom(...ISSUE_ORDERS), { maxLength: 3 })),
    ),
    align: mostly(fc.oneof(fc.integer({ min: 0, max: 6000 }), fc.constantFrom('1Ki', '0'))),
    streamFlags: mostly(fc.constantFrom('non-blocking', 'default')),
  },
  { requiredKeys: [] },
);
const repetitions = fc.record(
  {
    warmup: mostly(fc.integer({ min: -1, max: 10 })),
    reps: mostly(fc.integer({ min: 0, max: 10 })),
    maxNoise: mostly(fc.double({ min: -1, max: 10 })),
    maxTime: mostly(fc.double({ min: -1, max: 10 })),
  },
  { requiredKeys: [] },
);
const configValue = fc.record(
  {
    name: mostly(fc.string({ maxLength: 8 })),
    device: mostly(fc.integer({ min: -1, max: 8 })),
    hostMemory: mostly(fc.constantFrom(...HOST_MEMORY_KINDS)),
    buffers: mostly(fc.dictionary(bufferName, buffer, { maxKeys: 4 })),
    kernels: mostly(fc.array(kernel, { maxLength: 3 })),
    pipeline: mostly(pipeline),
    repetitions: mostly(repetitions),
    extra: anyValue,
  },
  { requiredKeys: [] },
);

/** A config that is usually valid, so that loading gets past the schema to kernels and the planner. */
const nearlyValidConfig = fc
  .record({
    elements: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 1 << 20 })),
    chunks: fc.integer({ min: 1, max: 64 }),
    streams: fc.integer({ min: 1, max: 8 }),
    align: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: 64 })),
    order: fc.subarray([...ISSUE_ORDERS], { minLength: 1 }),
    factor: fc.oneof(
      { weight: 3, arbitrary: fc.double({ min: -1e6, max: 1e6, noNaN: true }) },
      { weight: 1, arbitrary: oddNumber },
    ),
    grid: fc.oneof(fc.constantFrom('auto', 'cover'), fc.integer({ min: 1, max: 1024 })),
    block: fc.integer({ min: 1, max: 1024 }),
    chunkArg: fc.constantFrom('elements', 'offset'),
  })
  .map((c) => ({
    buffers: {
      x: { type: 'float32', count: c.elements, role: 'in' },
      y: { type: 'float32', count: c.elements, role: 'out' },
    },
    kernels: [
      {
        source: 'scale.cu',
        entry: 'scale',
        block: c.block,
        grid: c.grid,
        args: [{ buffer: 'x' }, { buffer: 'y' }, { chunk: c.chunkArg }, { float32: c.factor }],
      },
    ],
    pipeline: { chunks: c.chunks, streams: c.streams, align: c.align, order: c.order },
    repetitions: { reps: 2 },
  }));

/** The same subtree referenced many times: YAML anchors and aliases once stringified, nested to "billion laughs". */
const aliased = fc
  .tuple(configValue, fc.integer({ min: 1, max: 10 }), fc.integer({ min: 2, max: 9 }))
  .map(([base, levels, fanout]) => {
    let shared: unknown = base;
    for (let level = 0; level < levels; level += 1) shared = Array.from({ length: fanout }, () => shared);
    return { ...base, extra: shared };
  });

const deepText = fc
  .tuple(fc.constantFrom('[', '{a: ', '- ', 'a:\n', '? '), fc.integer({ min: 1, max: 5000 }), fc.boolean())
  .map(([open, depth, close]) => {
    const body =
      open === 'a:\n'
        ? Array.from({ length: Math.min(depth, 1500) }, (_, i) => `${' '.repeat(i)}a:`).join('\n')
        : open.repeat(depth) + '1';
    const closer = open === '[' ? ']' : open === '{a: ' ? '}' : '';
    return `buffers: ${body}${close ? closer.repeat(depth) : ''}\n`;
  });

const shippedConfig = readFileSync(join(packageRoot(), 'configs', 'balanced.yaml'), 'utf8');
/**
 * The shipped config with random characters replaced, inserted or deleted: text that is almost, but not quite, YAML.
 */
const mutatedText = fc
  .array(
    fc.tuple(
      fc.nat(),
      fc.constantFrom('replace', 'insert', 'delete'),
      fc.constantFrom(
        ':',
        '-',
        ' ',
        '\n',
        '\t',
        '[',
        ']',
        '{',
        '}',
        '&',
        '*',
        '!',
        '|',
        '>',
        '#',
        '"',
        "'",
        '%',
        '@',
        '\u0000',
        'é',
        '𝄞',
        '0',
      ),
    ),
    { minLength: 1, maxLength: 8 },
  )
  .map((edits) =>
    edits.reduce((text, [at, edit, char]) => {
      const i = at % (text.length + 1);
      if (edit === 'insert') return text.slice(0, i) + char + text.slice(i);
      if (edit === 'delete') return text.slice(0, i) + text.slice(i + 1);
      return text.slice(0, i) + char + text.slice(i + 1);
    }, shippedConfig),
  );

const yamlOf = (value: unknown): string => stringify(value, { aliasDuplicateObjects: true });

describe('the config loader (property)', () => {
  it('returns or throws a UsageError for generated config structures', () => {
    fc.assert(
      fc.property(configValue, (value) => loadsOrRefuses(yamlOf(value), true)),
      { numRuns: 250 },
    );
  });

  it('plans or refuses nearly valid configs, whatever their sizes and scalars', () => {
    fc.assert(
      fc.property(nearlyValidConfig, (value) => loadsOrRefuses(yamlOf(value), true)),
      { numRuns: 150 },
    );
  });

  it('refuses alias expansion and deep nesting quickly', () => {
    fc.assert(
      fc.property(fc.oneof(aliased.map(yamlOf), deepText), (text) => loadsOrRefuses(text)),
      { numRuns: 60 },
    );
  });

  it('refuses or loads text that is barely YAML', () => {
    fc.assert(
      fc.property(
        fc.oneof(mutatedText, fc.string({ maxLength: 200 }), fc.string({ unit: anyCodePoint, maxLength: 200 })),
        (text) => loadsOrRefuses(text),
      ),
      { numRuns: 250 },
    );
  });
});

describe('run --dry-run end to end (property)', () => {
  it('exits 0 or 2, without a stack trace, for generated configs', () => {
    fc.assert(
      fc.property(fc.oneof(nearlyValidConfig, configValue), (value) => {
        const { code, stderr } = runCli(['run', '--dry-run', writeCase(yamlOf(value))], {}, { timeoutMs: 20_000 });
        assert.ok(code === 0 || code === 2, `exit ${code}: ${stderr}`);
        assert.doesNotMatch(stderr, /internal error|\n\s+at /);
      }),
      { numRuns: 10 },
    );
  });
});
