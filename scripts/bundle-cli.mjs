// Writes dist/cli/: the compiled CLI (dist/src/cli/start.js, main.js and everything they import, the packages too) as a
// few chunks, which bin/cuda-pipe, the portable bundle and the tests start through dist/cli/cuda-pipe.js
// (scripts/cli-loader.cjs). Resolving, opening and compiling the 300 modules of dist/src one by one was most of a
// command's start (docs/measurements/2026-11-26-test-speed-4/), and compiling the chunks most of what remained
// (docs/measurements/2026-11-28-cli-start-2/): Node.js 20 keeps no compile cache, and V8 takes a cache of compiled code
// only for a script, not for an ES module. So esbuild splits the CLI into ES modules, each command a chunk of its own
// loaded when it runs, as in dist/src; each chunk is then rewritten as CommonJS (strict, as the ES module was), and
// the build runs the commands whose start matters, writing the code V8 compiled for each chunk beside it. koffi (a
// native addon) and sql.js (which reads its WebAssembly beside it) stay packages, found from here as from any compiled
// module. Built from dist/src after tsc, so that it holds exactly the compiled code.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, transform } from 'esbuild';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

// Three packages do at load or at every call what the CLI does not need, and each start paid for it
// (docs/measurements/2026-11-28-cli-start/):
// - zod re-exports its error messages in 64 languages (z.locales: 360 kB of the 825 kB chunk of zod and the kinds
//   that report, compare and schema compile); cuda-pipe speaks English, which zod registers from locales/en.js on its
//   own, and never reads z.locales: the namespace keeps English alone.
// - string-width builds an Intl.Segmenter when loaded (25 ms: ICU's data): it is built at its first use instead.
// - wrap-ansi measures every word with string-width, which segments it (80 ms of `--help`): it gets text-width.ts'
//   textWidth, which counts exactly as string-width does (a test checks it) without segmenting plain text.
// A rewrite fails the build where the package's text has changed, rather than bring the cost back unnoticed.
const inFolder = (path, ...folders) => path.includes(join('node_modules', ...folders, ''));
/** An import replaced by a module of one re-export, `exported` of `file`. */
const reexport = (namespace, file, exported) => ({ path: file, namespace, pluginData: exported });
// By its real path: where node_modules is a link (a worktree's, say), esbuild names the files by the link's target,
// and a build that missed the rewrite started `schema` 25 ms later (docs/measurements/2026-11-29-escape-walk/).
const stringWidth = realpathSync(join(root, 'node_modules', 'string-width', 'index.js'));
let segmenterDeferred = false;
const lazySegmenter = (text) => {
  const built = 'const segmenter = new Intl.Segmenter();';
  const used = 'segmenter.segment(';
  if (!text.includes(built) || !text.includes(used)) {
    throw new Error(`${stringWidth} no longer builds its Intl.Segmenter as scripts/bundle-cli.mjs expects`);
  }
  return text.replace(built, 'let segmenter;').replaceAll(used, '(segmenter ??= new Intl.Segmenter()).segment(');
};
const zodEnglish = (importer) =>
  reexport('reexport', join(dirname(importer), '..', 'locales', 'en.js'), 'default as en');
const textWidth = reexport('reexport', join(root, 'dist', 'src', 'report', 'text-width.js'), 'textWidth as default');
const startCosts = {
  name: 'start-costs',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      inFolder(args.importer, 'zod', 'v4') ? zodEnglish(args.importer) : undefined,
    );
    b.onResolve({ filter: /^string-width$/ }, (args) => (inFolder(args.importer, 'wrap-ansi') ? textWidth : undefined));
    // The stage kinds' flags as JSON: kind-flags.ts reads them from the list with a top-level await otherwise.
    b.onLoad({ filter: /[\\/]dist[\\/]src[\\/]cli[\\/]kind-flags\.js$/ }, () => ({
      contents: `export const KIND_FLAGS = ${JSON.stringify(KIND_FLAGS)};`,
      loader: 'js',
    }));
    b.onLoad({ filter: /.*/, namespace: 'reexport' }, (args) => ({
      contents: `export { ${args.pluginData} } from ${JSON.stringify(args.path)};`,
      resolveDir: dirname(args.path),
    }));
    // Only the string-width that text-width.ts imports: cli-progress and cli-table3 carry an older one of their own.
    b.onLoad({ filter: /[\\/]string-width[\\/]index\.js$/ }, (args) => {
      if (realpathSync(args.path) !== stringWidth) return undefined;
      segmenterDeferred = true;
      return { contents: lazySegmenter(readFileSync(args.path, 'utf8')), loader: 'js' };
    });
  },
};
const outdir = join(root, 'dist', 'cli');

// Chunk names carry a hash of their contents: an earlier build's chunks would stay beside the new ones.
rmSync(outdir, { recursive: true, force: true });
// The stage kinds' environment variables, for the top-level help, and their flags for `run` and `sweep` (options.ts),
// as the kinds declare them.
const compiled = (...path) => import(pathToFileURL(join(root, 'dist', 'src', ...path)).href);
const { KIND_ENVIRONMENT, KIND_FLAGS } = await compiled('kinds', 'index.js');
// The JSON Schemas `cuda-pipe schema` prints (src/cli/schema.ts), as the compiled sources make them.
const SCHEMAS = {
  config: (await compiled('config', 'schema.js')).configJsonSchema(),
  result: (await compiled('result', 'schema.js')).resultJsonSchema(),
  analysis: (await compiled('analysis', 'document.js')).analysisJsonSchema(),
};

await build({
  entryPoints: { start: join(root, 'dist', 'src', 'cli', 'start.js') },
  outdir,
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['koffi', 'sql.js'],
  plugins: [startCosts],
  define: {
    CUDA_PIPE_KIND_ENVIRONMENT: JSON.stringify(JSON.stringify(KIND_ENVIRONMENT)),
    CUDA_PIPE_SCHEMAS: JSON.stringify(JSON.stringify(SCHEMAS)),
  },
  logLevel: 'warning',
});

if (!segmenterDeferred)
  throw new Error(`the build never loaded ${stringWidth}, so its Intl.Segmenter was not deferred`);

// Each chunk as CommonJS for scripts/cli-loader.cjs: strict, as an ES module is; import() of a chunk as require(), so
// that a command's chunk is loaded as the others are; import.meta.url as the URL the loader hands each chunk. esbuild
// escapes every character outside ASCII in code (charset), leaving comments: those are escaped too, so that the
// loader reads each chunk as a string of one byte a character.
for (const name of readdirSync(outdir)) {
  const file = join(outdir, name);
  const { code } = await transform(readFileSync(file, 'utf8'), {
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    charset: 'ascii',
    supported: { 'dynamic-import': false },
    define: { 'import.meta.url': 'cudaPipeModuleUrl' },
    logLevel: 'warning',
  });
  if (/\bimport\.meta\b/.test(code))
    throw new Error(`${name} still reads import.meta, which the CommonJS chunks have not`);
  const ascii = code.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  writeFileSync(file, `"use strict";${ascii}`);
}
// The loader is dist/cli/cuda-pipe.js, CommonJS in a package that is otherwise ES modules.
writeFileSync(join(outdir, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
copyFileSync(join(root, 'scripts', 'cli-loader.cjs'), join(outdir, 'cuda-pipe.js'));

// The commands whose start issue 40 times (scripts/bench/start.mjs), each run once through the loader, which writes
// the code compiled for every chunk it loaded, added to what the runs before left. Run with this Node.js and no V8
// flags, as the installed command runs: V8 refuses a cache made by another version or with other flags.
const fixture = (name) => join(root, 'test', 'fixtures', name);
const RECORDED = [
  // `--help` alone prints the help laid out below without loading a chunk; `help` is commander's way to it.
  ['help'],
  ['schema'],
  ['compare', fixture('h100-balanced-1.json'), fixture('h100-balanced-2.json')],
  ['report', fixture('h200-balanced-16-traced.json')],
];
const loader = join(outdir, 'cuda-pipe.js');
const record = `process.argv.splice(1, 0, ${JSON.stringify(loader)}); require(${JSON.stringify(loader)}).start({ recordCache: true });`;
const env = { ...process.env, COLUMNS: '100', NO_COLOR: '1' };
delete env.NODE_OPTIONS;
for (const args of RECORDED) {
  const run = spawnSync(process.execPath, ['-e', record, '--', ...args], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  if (run.status !== 0)
    throw new Error(
      `cuda-pipe ${args.join(' ')} failed while the build recorded its compiled code (${run.status ?? run.signal}): ${run.stderr}`,
    );
}

// `--help` (or `-h`) alone, the top-level help, laid out here for every width from MIN_COLUMNS to HELP_MAX_COLUMNS:
// the loader prints the file of its width without loading commander and the definitions of 12 commands, which took
// most of that start (docs/measurements/2026-11-28-cli-start-3/). Each is what commander prints at that width, from
// the compiled program in this process; a wider terminal, or anything beside the flag, takes commander's way.
const HELP_MAX_COLUMNS = 300;
const { cliMain } = await import(pathToFileURL(join(root, 'dist', 'src', 'cli', 'program.js')).href);
const { DEFAULT_COLUMNS, MIN_COLUMNS } = await import(
  pathToFileURL(join(root, 'dist', 'src', 'report', 'width.js')).href
);
const helpDir = join(outdir, 'help');
mkdirSync(helpDir);
const asked = process.env.COLUMNS;
for (let columns = MIN_COLUMNS; columns <= HELP_MAX_COLUMNS; columns++) {
  process.env.COLUMNS = String(columns);
  let text = '';
  const collect = { isTTY: false, write: (chunk) => (text += chunk) };
  const { code } = await cliMain(['node', 'cuda-pipe', '--help'], { stdout: collect, stderr: collect });
  if (code !== 0) throw new Error(`cuda-pipe --help at ${columns} columns exited ${code}: ${text}`);
  writeFileSync(join(helpDir, `${columns}.txt`), text);
}
if (asked === undefined) delete process.env.COLUMNS;
else process.env.COLUMNS = asked;
writeFileSync(
  join(helpDir, 'widths.json'),
  `${JSON.stringify({ min: MIN_COLUMNS, fallback: DEFAULT_COLUMNS, max: HELP_MAX_COLUMNS })}\n`,
);
