// Writes dist/cli/: the compiled CLI (dist/src/cli/start.js, main.js and everything they import, the packages too) as a few ES
// modules, which bin/cuda-pipe, the portable bundle and the tests start (dist/cli/cuda-pipe.js). Node.js 20 keeps no
// compile cache, and resolving, opening and compiling the 300 modules of dist/src one by one was most of a command's
// start (docs/measurements/2026-11-26-test-speed-4/). Each command stays a chunk of its own, loaded when it runs, as
// in dist/src, so `--version` loads none of them. koffi (a native addon) and sql.js (which reads its WebAssembly
// beside it) stay packages, found from here as from any compiled module. Built from dist/src after tsc, so that it
// holds exactly the compiled code.
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const outdir = join(root, 'dist', 'cli');

// Chunk names carry a hash of their contents: an earlier build's chunks would stay beside the new ones.
rmSync(outdir, { recursive: true, force: true });
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
  logLevel: 'warning',
});
