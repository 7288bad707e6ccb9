import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { exitCodeFor } from '../../src/cli/exit-code.js';
import { COMMAND_EXAMPLES } from '../../src/cli/help-text.js';
import { cliMain } from '../../src/cli/program.js';
import { configJsonSchema } from '../../src/config/schema.js';
import { DeviceFailure, EnvironmentError, Interrupted, MeasurementFailure, UsageError } from '../../src/errors.js';
import { HostStageFailure } from '../../src/kinds/host/workers/failure.js';
import { renderHostMemoryTable } from '../../src/report/host-memory.js';
import { renderSchemaOutline } from '../../src/report/schema-outline.js';
import { DEFAULT_COLUMNS, paragraphColumns } from '../../src/report/width.js';
import { loadResults } from '../../src/result/load.js';
import { resultJsonSchema } from '../../src/result/schema.js';
import { runCli } from '../helpers/cli.js';
import { overlong } from '../helpers/width.js';

// Issue 39: every command's output and every error fits 80 and 100 columns, not only `report`'s
// (render-width-commands.test.ts and render-width-run.test.ts draw those): help, the dry runs, kernels, schema, and
// every error paragraph, the no-driver one that a user without a GPU sees first among them.

const COLUMNS = [80, 100] as const;
const COMMANDS = Object.keys(COMMAND_EXAMPLES);

/** A command line's stdout and stderr at `columns`, as the CLI writes them to a pipe with COLUMNS set. */
const at = (columns: number, args: readonly string[]) =>
  runCli(args, { COLUMNS: String(columns) }, { timeoutMs: 60_000 });

describe('help fits the width', () => {
  for (const columns of COLUMNS) {
    it(`--help and every command's --help at ${columns} columns`, { timeout: 60_000 }, () => {
      for (const args of [['--help'], ...COMMANDS.map((command) => [command, '--help'])]) {
        const { code, stdout } = at(columns, args);
        assert.equal(code, 0, args.join(' '));
        assert.deepEqual(overlong(stdout, columns), [], args.join(' '));
      }
    });
  }

  it('lists each command with its description under it at 80 columns, where a column beside it would be too narrow', () => {
    const { stdout } = at(80, ['--help']);
    assert.match(
      stdout,
      /^ {2}compare \[options\] <baseline\.json> <candidate\.json>\n {6}compare two result files: faster, slower, same or noisy/m,
    );
    // At 100 columns the description fits beside the longest command (50 columns), as commander lays it out.
    assert.match(
      at(100, ['--help']).stdout,
      /^ {2}compare \[options\] <baseline\.json> <candidate\.json> {2}compare two result files/m,
    );
  });

  it('keeps every example command line whole at 80 columns, its reason under it where the two do not fit side by side', () => {
    for (const command of COMMANDS) {
      const { stdout } = at(80, [command, '--help']);
      const examples = stdout.slice(stdout.indexOf('Examples:\n'));
      for (const [line] of COMMAND_EXAMPLES[command as keyof typeof COMMAND_EXAMPLES])
        assert.ok(examples.includes(`  $ ${line}`), `${command}: ${line}`);
    }
  });

  it('gives analyze an example of --ab, and none of its examples past 100 columns (they ran to 143)', () => {
    const { stdout } = at(100, ['analyze', '--help']);
    assert.match(stdout, /^ {2}\$ cuda-pipe analyze --ab before\.json after\.json\s+# B against A/m);
    assert.deepEqual(overlong(stdout, 100), []);
  });

  it('names every command that exits 1 on a slowdown in the exit codes, ab and analyze --ab among them', () => {
    const { stdout } = at(100, ['--help']);
    const one = /^ {4}1 {2}([\s\S]*?)\n {4}2 {2}/m.exec(stdout)?.[1]?.replace(/\s+/g, ' ') ?? '';
    assert.match(one, /compare, ab or analyze --ab found a slowdown/);
    for (const command of ['compare', 'ab'])
      assert.match(at(100, [command, '--help']).stdout, /exit 1 (on|when)/, command);
  });
});

describe('dry runs fit the width', () => {
  const configs = readdirSync('configs')
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => join('configs', f));

  it('run --dry-run of every shipped config at 80 columns, and --ops at 80 and 100 (lines of 213 columns before)', {
    timeout: 120_000,
  }, () => {
    assert.ok(configs.length >= 20, `${configs.length} configs`);
    for (const config of configs) {
      const { code, stdout, stderr } = at(80, ['run', config, '--dry-run']);
      assert.equal(code, 0, `${config}: ${stderr}`);
      assert.deepEqual(overlong(stdout, 80), [], config);
    }
    for (const columns of COLUMNS)
      assert.deepEqual(overlong(at(columns, ['run', '--dry-run', '--ops']).stdout, columns), []);
  });

  it('sweep --dry-run takes COLUMNS: 80 lays it out narrower than 100, each within its width', () => {
    const [narrow, wide] = COLUMNS.map((columns) => at(columns, ['sweep', '--dry-run']).stdout);
    assert.deepEqual(overlong(narrow ?? '', 80), []);
    assert.deepEqual(overlong(wide ?? '', 100), []);
    assert.ok((narrow ?? '').split('\n').length > (wide ?? '').split('\n').length, 'the same text in more lines at 80');
    assert.match(narrow ?? '', /^22 layouts in all, raced for at most 40 s a setting/m);
  });

  it('kernels lists every signature within the width (5 lines over 100 before)', () => {
    for (const columns of COLUMNS) {
      const { code, stdout } = at(columns, ['kernels']);
      assert.equal(code, 0);
      assert.deepEqual(overlong(stdout, columns), []);
      assert.match(
        stdout.replace(/\n +/g, ' '),
        /fma_loop\(const float\* __restrict__ in, float\* __restrict__ out, unsigned long long n, int iterations\)/,
      );
    }
  });
});

describe('run --host-memory', () => {
  it('draws its table within 80 and 100 columns, without the copy rates where the whole table is too wide', () => {
    const results = ['h100-balanced-1', 'h100-balanced-2', 'h200-balanced-16-model'].flatMap((name) =>
      loadResults(`test/fixtures/${name}.json`),
    );
    const [narrow, wide] = COLUMNS.map((columns) => renderHostMemoryTable(results, columns));
    assert.deepEqual(overlong(narrow ?? '', 80), []);
    assert.deepEqual(overlong(wide ?? '', 100), []);
    assert.match(wide ?? '', /│ host memory │ +H2D │ +D2H │ +serial │ overlapped │ speedup │ overlap achieved │/);
    assert.doesNotMatch(narrow ?? '', /│ +H2D │/);
    assert.match(narrow ?? '', /│ pinned +│ +12\.\d+ ms │/);
  });
});

describe('schema', () => {
  /** The command at a terminal of `columns`: its stdout, COLUMNS unset so that the terminal's width counts. */
  async function atTerminal(columns: number, args: readonly string[]): Promise<string> {
    const saved = process.env.COLUMNS;
    delete process.env.COLUMNS;
    let text = '';
    try {
      const terminal = { isTTY: true, columns, write: (chunk: string) => (text += chunk) };
      const { code } = await cliMain(['node', 'cuda-pipe', ...args], { stdout: terminal, stderr: terminal });
      assert.equal(code, 0);
    } finally {
      if (saved !== undefined) process.env.COLUMNS = saved;
    }
    return text;
  }

  for (const columns of COLUMNS) {
    it(`outlines each schema's fields at a terminal of ${columns} columns (55 lines over 100 before)`, async () => {
      for (const args of [['schema'], ['schema', '--result'], ['schema', '--analysis']]) {
        const text = await atTerminal(columns, args);
        assert.deepEqual(overlong(text, columns), [], args.join(' '));
        assert.match(text.replace(/\s+/g, ' '), /The JSON Schema itself goes to a pipe or a file: cuda-pipe schema/);
      }
    });
  }

  it('names each field with its type, and whether it is required, under its parent', () => {
    const outline = renderSchemaOutline(configJsonSchema(), 'cuda-pipe schema', 100);
    assert.match(outline, /^ {2}pipeline\.streams \(integer ≥ 1\)/m);
    assert.match(
      outline,
      /^ {2}buffers\.\*\.role \(in \| out \| inout \| scratch \| resident, required\): in: copied to the GPU/m,
    );
    assert.match(
      renderSchemaOutline(resultJsonSchema(), 'cuda-pipe schema --result', 100),
      /^modes \(array of object, required\)/m,
    );
  });

  it('writes the JSON Schema whole to a pipe, as an editor reads it', () => {
    const { code, stdout } = runCli(['schema'], { COLUMNS: '80' });
    assert.equal(code, 0);
    assert.deepEqual(JSON.parse(stdout), JSON.parse(JSON.stringify(configJsonSchema())));
  });
});

describe('prose is wrapped where a person reads it', () => {
  it("takes COLUMNS or the terminal's width; to a pipe or a file without COLUMNS, a paragraph stays one line for grep", () => {
    assert.equal(paragraphColumns({ isTTY: true, columns: 80 }, {}), 80);
    assert.equal(paragraphColumns({ isTTY: false }, { COLUMNS: '100' }), 100);
    assert.equal(paragraphColumns({ isTTY: false }, {}), Number.POSITIVE_INFINITY);
    assert.equal(paragraphColumns({ isTTY: true, columns: undefined }, {}), DEFAULT_COLUMNS);
  });

  it("keeps the dry run's lines and the no-driver paragraph whole in a pipe without COLUMNS", () => {
    const plan = runCli(['run', '--dry-run']).stdout;
    assert.match(
      plan,
      /^mode serial: whole buffers on one stream: H2D, kernels, D2H; 5 ops \([^)]*\) on 1 stream; H2D 256 MiB, D2H 256 MiB; its outputs will be verified$/m,
    );
    const { stderr } = runCli(['run']);
    assert.match(stderr, /^cuda-pipe: No CUDA driver: [^\n]+\.\n[^\n]+\n$/);
  });
});

describe('errors fit the width', () => {
  const long = (what: string) =>
    `${what}: ${'a reason that goes on, naming a file /tmp/some/folder/config.yaml and a field pipeline.streams, '.repeat(3)}`;
  const errors = [
    new MeasurementFailure(long('outputs differ'), { hint: long('what to do') }),
    new UsageError(long('bad flag'), { hint: long('what to do') }),
    new EnvironmentError(long('no driver'), { hint: long('what to do') }),
    new DeviceFailure(long('out of memory'), { hint: long('what to do') }),
    new HostStageFailure(long('the stage threw'), { hint: long('what to do') }),
    new Interrupted(long('interrupted'), { hint: long('what to do') }),
    new TypeError(long('an internal error')),
  ];

  for (const columns of COLUMNS) {
    it(`the top-level catch fits every error class's paragraph to ${columns} columns, no word lost`, () => {
      for (const error of errors) {
        let text = '';
        exitCodeFor(error, false, (chunk) => (text += chunk), columns);
        assert.deepEqual(overlong(text, columns), [], error.constructor.name);
        assert.ok(text.replace(/\s+/g, ' ').includes(error.message.trim()), error.constructor.name);
      }
    });

    it(`the no-driver paragraph, the first a user without a GPU sees, fits ${columns} columns (271 before)`, () => {
      const { code, stderr } = at(columns, ['run']);
      assert.equal(code, 3, stderr);
      assert.match(stderr, /^cuda-pipe: /);
      assert.deepEqual(overlong(stderr, columns), []);
    });

    it(`a usage error and commander's own errors fit ${columns} columns`, () => {
      const usage = at(columns, ['run', '--dry-run', '--json', 'r.json']);
      assert.equal(usage.code, 2);
      const commander = at(columns, ['run', '--timeout', '2147484']);
      assert.equal(commander.code, 2);
      for (const text of [usage.stderr, commander.stderr]) assert.deepEqual(overlong(text, columns), []);
    });
  }
});
