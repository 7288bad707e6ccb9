import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { build, type Metafile } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { mayPrintTopLevelHelp } from '../../src/cli/program.js';
import { packageRoot } from '../../src/paths.js';
import { DEFAULT_COLUMNS, MIN_COLUMNS, outputColumns } from '../../src/report/width.js';
import { runCli } from '../helpers/cli.js';

// What a start loads decides how long it takes (issue 40: --version under 100 ms, report under 200): each command's
// module is imported only when it runs, and neither --version nor the commands that read documents may load the
// native addon, the YAML parser or the stage kinds' schemas by a static import. Read from esbuild's graph of the
// sources, in which a static import and a dynamic one are told apart.

/** The metafile of the CLI's sources, bundled from start.ts as scripts/bundle-cli.mjs bundles them. */
async function sourceGraph(): Promise<Metafile> {
  const result = await build({
    entryPoints: ['src/cli/start.ts'],
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    splitting: true,
    outdir: 'unused',
    external: ['koffi', 'sql.js'],
    logLevel: 'silent',
  });
  return result.metafile;
}

/** Every file `from` loads through static imports alone, each mapped to the file that imports it. */
function staticallyLoaded(graph: Metafile, from: string): Map<string, string | null> {
  const parent = new Map<string, string | null>([[from, null]]);
  const queue = [from];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const { path, kind } of graph.inputs[file]?.imports ?? []) {
      if (kind !== 'import-statement' || parent.has(path)) continue;
      parent.set(path, file);
      queue.push(path);
    }
  }
  return parent;
}

/** The import chain from the entry to `file`, for a failure's message. */
function chain(loaded: Map<string, string | null>, file: string): string {
  const links: string[] = [];
  for (let at: string | null | undefined = file; at; at = loaded.get(at)) links.unshift(at);
  return links.join(' -> ');
}

const unwanted = (loaded: Map<string, string | null>, patterns: readonly RegExp[]) =>
  [...loaded.keys()].filter((file) => patterns.some((p) => p.test(file))).map((file) => chain(loaded, file));

const HEAVY = [/^koffi$/, /node_modules\/yaml\//, /node_modules\/zod\//, /^src\/kinds\//, /^src\/cuda\/(?!exit\.ts$)/];

describe('what a start loads', { timeout: 60_000 }, () => {
  it('the entry and the program load no native addon, YAML parser, zod or stage kind before a command runs', async () => {
    const graph = await sourceGraph();
    // start.ts installs the early signal handlers, then imports main.ts, whatever the command.
    for (const entry of ['src/cli/start.ts', 'src/cli/main.ts']) {
      const loaded = staticallyLoaded(graph, entry);
      assert.deepEqual(unwanted(loaded, HEAVY), [], entry);
    }
    const program = staticallyLoaded(graph, 'src/cli/main.ts');
    assert.ok(
      program.has('src/cli/program.ts') && [...program.keys()].some((f) => f.includes('node_modules/commander/')),
      'the graph was read',
    );
  });

  it('report and compare load neither the native addon nor the YAML parser', async () => {
    const graph = await sourceGraph();
    for (const command of ['report', 'compare']) {
      const loaded = staticallyLoaded(graph, `src/cli/${command}.ts`);
      assert.ok(loaded.size > 20, command);
      assert.deepEqual(unwanted(loaded, [/^koffi$/, /node_modules\/yaml\//, /^src\/cuda\/(?!exit\.ts$)/]), [], command);
    }
  });

  it('schema loads no zod and no stage kind either: the bundle holds its JSON Schemas, made when it is built', async () => {
    const loaded = staticallyLoaded(await sourceGraph(), 'src/cli/schema.ts');
    assert.ok(loaded.has('src/report/schema-outline.ts'), 'the graph was read');
    assert.deepEqual(unwanted(loaded, HEAVY), []);
  });
});

describe('the top-level help names the stage kinds’ variables wherever it prints', { timeout: 120_000 }, () => {
  it('loads them for help, no command, an unknown command or help for one, and for nothing else', () => {
    for (const args of [[], ['--help'], ['-h'], ['help'], ['help', 'bogus'], ['bogus'], ['--verbose']])
      assert.ok(mayPrintTopLevelHelp(args), args.join(' '));
    for (const args of [
      ['--version'],
      ['-V'],
      ['report', 'r.json'],
      ['--verbose', 'compare', 'a', 'b'],
      ['run', '--help'],
      ['schema'],
    ])
      assert.equal(mayPrintTopLevelHelp(args), false, args.join(' '));
  });

  it('lists CUDA_PIPE_NCCL, CUDA_PIPE_CUBLAS and CUDA_PIPE_CUBLASLT in a process of its own', () => {
    // A process of its own: in the test's shared CLI thread an earlier --help would have loaded the kinds already.
    for (const args of [['--help'], [], ['help', 'bogus']]) {
      const run = runCli(args, {}, { process: true });
      const help = run.stdout + run.stderr;
      assert.match(help, /Environment:/, args.join(' '));
      for (const name of ['CUDA_PIPE_NCCL', 'CUDA_PIPE_CUBLAS', 'CUDA_PIPE_CUBLASLT'])
        assert.match(help, new RegExp(`\\n  ${name} `), `${args.join(' ')}: ${name}`);
    }
  });
});

/** The loader the installed command starts (scripts/cli-loader.cjs), as the build copies it to dist/cli/. */
interface Loader {
  aloneFlag(args: readonly string[]): 'version' | 'help' | null;
  helpColumns(
    widths: { min: number; fallback: number },
    env: NodeJS.ProcessEnv,
    stdout: { isTTY?: boolean; columns?: number },
  ): number;
}
const loader = createRequire(import.meta.url)(join(packageRoot(), 'scripts', 'cli-loader.cjs')) as Loader;

describe('--version and --help alone are answered by the loader, before any chunk loads', { timeout: 120_000 }, () => {
  it('takes each flag with nothing beside it, and leaves every other command line to commander', () => {
    for (const args of [['--version'], ['-V']]) assert.equal(loader.aloneFlag(args), 'version', args.join(' '));
    for (const args of [['--help'], ['-h']]) assert.equal(loader.aloneFlag(args), 'help', args.join(' '));
    for (const args of [
      [],
      ['--verbose', '--version'],
      ['--version', '--verbose'],
      ['run', '--version'],
      ['run', '--help'],
      ['--help', 'run'],
      ['-v'],
      ['--Version'],
      ['version'],
      ['help'],
    ])
      assert.equal(loader.aloneFlag(args), null, args.join(' '));
  });

  it('prints what commander prints for the version, with exit 0, in a process of its own', () => {
    // `--verbose --version` takes commander's path; `--version` and `-V` alone take the loader's.
    const commander = runCli(['--verbose', '--version'], {}, { process: true });
    assert.equal(commander.code, 0);
    assert.match(commander.stdout, /^\d+\.\d+\.\d+\n$/);
    for (const flag of ['--version', '-V']) assert.deepEqual(runCli([flag], {}, { process: true }), commander, flag);
  });

  it('lays the help out at the width outputColumns gives, for every COLUMNS and terminal', () => {
    const widths = { min: MIN_COLUMNS, fallback: DEFAULT_COLUMNS };
    for (const COLUMNS of [undefined, '', '0', '30', '60', '61', '137', '300', '301', '99999', '100000', 'wide', '80x'])
      for (const stdout of [{}, { isTTY: false, columns: 150 }, { isTTY: true, columns: 150 }, { isTTY: true }]) {
        const env = COLUMNS === undefined ? {} : { COLUMNS };
        assert.equal(
          loader.helpColumns(widths, env, stdout),
          outputColumns(stdout, env),
          JSON.stringify([env, stdout]),
        );
      }
  });

  it('prints the help commander prints at each width, from the file the build laid out, with exit 0', (t) => {
    const built = join(packageRoot(), 'dist', 'cli');
    if (!existsSync(join(built, 'help', 'widths.json'))) return t.skip('dist/cli is not built');
    for (const columns of ['60', '61', '100', '137', '300', '301']) {
      // `help` is commander's way to the same text; 301 columns is past the widest laid out, and takes it too.
      const commander = runCli(['help'], { COLUMNS: columns }, { process: true });
      assert.equal(commander.code, 0);
      assert.match(commander.stdout, /^Usage: cuda-pipe /);
      for (const flag of ['--help', '-h'])
        assert.deepEqual(runCli([flag], { COLUMNS: columns }, { process: true }), commander, `${flag} at ${columns}`);
    }
  });
});

describe('the built CLI starts from the code V8 compiled when it was built', { timeout: 120_000 }, () => {
  it('runs report with a cache for every chunk it loads, and V8 takes each one', (t) => {
    const dir = join(packageRoot(), 'dist', 'cli');
    if (!existsSync(join(dir, 'cuda-pipe.js'))) return t.skip('dist/cli is not built');
    // The loader is run as the installed command runs it, with no V8 flag (a cache made without one is refused under
    // one), each chunk's script watched as it is made.
    const watch = `const vm = require('node:vm'); const Script = vm.Script; const seen = [];
      vm.Script = class extends Script { constructor(s, o) { super(s, o); seen.push([o.filename, o.cachedData !== undefined, this.cachedDataRejected === true]); } };
      process.on('exit', () => process.stderr.write('\\n' + JSON.stringify(seen)));
      process.argv.splice(1, 0, 'cuda-pipe'); require(${JSON.stringify(join(dir, 'cuda-pipe.js'))}).start();`;
    const fixture = join(packageRoot(), 'test', 'fixtures', 'h200-balanced-16-traced.json');
    const run = spawnSync(process.execPath, ['-e', watch, '--', 'report', fixture], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    assert.equal(run.status, 0, run.stderr);
    const seen = JSON.parse(run.stderr.trim().split('\n').at(-1) ?? '[]') as [string, boolean, boolean][];
    assert.ok(seen.length > 20, `${seen.length} chunks`);
    assert.deepEqual(
      seen.filter(([, cached, rejected]) => !cached || rejected),
      [],
      'chunks without a cache V8 took',
    );
    const chunks = readdirSync(dir).filter((name) => name.endsWith('.js') && name !== 'cuda-pipe.js');
    assert.ok(
      seen.every(([file]) => chunks.some((name) => file.endsWith(name))),
      'only the chunks the build wrote',
    );
  });
});
