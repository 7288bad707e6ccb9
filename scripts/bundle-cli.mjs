// Writes dist/cli/: the compiled CLI (dist/src/cli/start.js, main.js and everything they import, the packages too) as a few ES
// modules, which bin/cuda-pipe, the portable bundle and the tests start (dist/cli/cuda-pipe.js). Node.js 20 keeps no
// compile cache, and resolving, opening and compiling the 300 modules of dist/src one by one was most of a command's
// start (docs/measurements/2026-11-26-test-speed-4/). Each command stays a chunk of its own, loaded when it runs, as
// in dist/src, so `--version` loads none of them. koffi (a native addon) and sql.js (which reads its WebAssembly
// beside it) stay packages, found from here as from any compiled module. Built from dist/src after tsc, so that it
// holds exactly the compiled code.
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

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
const stringWidth = join(root, 'node_modules', 'string-width', 'index.js');
const lazySegmenter = (text) => {
  const built = 'const segmenter = new Intl.Segmenter();';
  const used = 'segmenter.segment(';
  if (!text.includes(built) || !text.includes(used)) {
    throw new Error(`${stringWidth} no longer builds its Intl.Segmenter as scripts/bundle-cli.mjs expects`);
  }
  return text.replace(built, 'let segmenter;').replaceAll(used, '(segmenter ??= new Intl.Segmenter()).segment(');
};
const zodEnglish = (importer) => reexport('reexport', join(dirname(importer), '..', 'locales', 'en.js'), 'default as en');
const textWidth = reexport('reexport', join(root, 'dist', 'src', 'report', 'text-width.js'), 'textWidth as default');
const startCosts = {
  name: 'start-costs',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => (inFolder(args.importer, 'zod', 'v4') ? zodEnglish(args.importer) : undefined));
    b.onResolve({ filter: /^string-width$/ }, (args) => (inFolder(args.importer, 'wrap-ansi') ? textWidth : undefined));
    b.onLoad({ filter: /.*/, namespace: 'reexport' }, (args) => ({
      contents: `export { ${args.pluginData} } from ${JSON.stringify(args.path)};`,
      resolveDir: dirname(args.path),
    }));
    // Only the string-width that text-width.ts imports: cli-progress and cli-table3 carry an older one of their own.
    b.onLoad({ filter: /[\\/]string-width[\\/]index\.js$/ }, (args) => {
      if (args.path !== stringWidth) return undefined;
      return { contents: lazySegmenter(readFileSync(args.path, 'utf8')), loader: 'js' };
    });
  },
};
const outdir = join(root, 'dist', 'cli');

// Chunk names carry a hash of their contents: an earlier build's chunks would stay beside the new ones.
rmSync(outdir, { recursive: true, force: true });
// The stage kinds' environment variables, for the top-level help, and their flags for `run` and `sweep` (program.ts),
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
  entryPoints: { 'cuda-pipe': join(root, 'dist', 'src', 'cli', 'start.js') },
  outdir,
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['koffi', 'sql.js'],
  // Packages written as CommonJS call require(), which an ES module does not have.
  banner: { js: "import { createRequire as cudaPipeCreateRequire } from 'node:module'; const require = cudaPipeCreateRequire(import.meta.url);" },
  plugins: [startCosts],
  define: {
    CUDA_PIPE_KIND_ENVIRONMENT: JSON.stringify(JSON.stringify(KIND_ENVIRONMENT)),
    CUDA_PIPE_KIND_FLAGS: JSON.stringify(JSON.stringify(KIND_FLAGS)),
    CUDA_PIPE_SCHEMAS: JSON.stringify(JSON.stringify(SCHEMAS)),
  },
  logLevel: 'warning',
});
