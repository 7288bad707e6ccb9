'use strict';
// dist/cli/cuda-pipe.js, copied there by scripts/bundle-cli.mjs: what bin/cuda-pipe, the portable bundle and the
// tests start. The CLI's chunks beside it are CommonJS, each run here from its source and the code V8 compiled for
// it when the build ran the commands (its .cache file), so that a start deserialises that code instead of parsing
// and compiling again: compiling the ~1 MB that `report` loads was its largest cost, and Node.js 20 caches no
// compiled code of its own (docs/measurements/2026-11-28-cli-start-2/). A cache V8 refuses (another Node.js, other
// V8 flags) costs nothing but the compile it would have saved: the chunk compiles from its source.
const { readFileSync, writeFileSync } = require('node:fs');
const { isAscii } = require('node:buffer');
const { createRequire } = require('node:module');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');
const { Script } = require('node:vm');

/** The parameters a chunk's code sees: CommonJS's, and its own URL for what esbuild wrote as import.meta.url. */
const WRAPPER = '(function (exports, require, module, __filename, __dirname, cudaPipeModuleUrl) {';

/**
 * Runs the CLI from `dir` (this file's folder). With `recordCache`, writes each loaded chunk's compiled code to its
 * .cache file at exit, the code V8 compiled in this run added to what its cache held: the build runs the commands
 * whose start matters this way, one after another.
 */
function start({ dir = __dirname, recordCache = false } = {}) {
  const args = process.argv.slice(2);
  const alone = aloneFlag(args);
  if (alone === 'version') {
    const manifest = JSON.parse(readFileSync(join(dir, '..', '..', 'package.json'), 'utf8'));
    return answer(`${manifest.version}\n`);
  }
  if (alone === 'help') {
    const help = builtHelp(dir, process.env, process.stdout);
    if (help !== null) return answer(help);
  }
  const modules = new Map();
  const compiled = [];
  const outside = createRequire(join(dir, 'start.js'));
  const load = (name) => {
    const known = modules.get(name);
    if (known) return known.exports;
    const module = { exports: {} };
    modules.set(name, module);
    const file = join(dir, name);
    const bytes = readFileSync(file);
    // A string of one byte a character is what V8 reads fastest; the build escapes every other character.
    const source = bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
    let cachedData;
    try {
      cachedData = readFileSync(`${file}.cache`);
    } catch {
      cachedData = undefined;
    }
    const script = new Script(`${WRAPPER}${source}\n})`, { filename: file, cachedData });
    compiled.push({ file, script });
    const require = (id) => (id.startsWith('./') ? load(id.slice(2)) : outside(id));
    require.resolve = outside.resolve;
    script.runInThisContext().call(module.exports, module.exports, require, module, file, dir, pathToFileURL(file).href);
    return module.exports;
  };
  if (recordCache) {
    process.on('exit', () => {
      for (const { file, script } of compiled) writeFileSync(`${file}.cache`, script.createCachedData());
    });
  }
  load('start.js');
}

/**
 * `--version` or `-V` alone, and `--help` or `-h` alone: the answers the loader gives without loading a chunk (the
 * version from the package's manifest, the help the build laid out). With anything beside the flag (`--verbose
 * --version`, `run --help`) commander decides, as it always did. Null for every other command line.
 */
function aloneFlag(args) {
  if (args.length !== 1) return null;
  if (args[0] === '--version' || args[0] === '-V') return 'version';
  if (args[0] === '--help' || args[0] === '-h') return 'help';
  return null;
}

/**
 * The top-level help the build laid out for this width (scripts/bundle-cli.mjs); null where there is none: a width
 * past the widest laid out, or no help built. Commander prints it then.
 */
function builtHelp(dir, env, stdout) {
  let widths;
  try {
    widths = JSON.parse(readFileSync(join(dir, 'help', 'widths.json'), 'utf8'));
  } catch {
    return null;
  }
  const columns = helpColumns(widths, env, stdout);
  return columns > widths.max ? null : readFileSync(join(dir, 'help', `${columns}.txt`), 'utf8');
}

/** Writes `text` to stdout, the whole command: exit 0, as src/cli/broken-pipe.ts when the reader went away. */
function answer(text) {
  process.stdout.on('error', (error) => {
    if (error.code !== 'EPIPE') {
      process.stderr.write(`cuda-pipe: Cannot write to stdout: ${error.message}.\n`);
      process.exit(3);
    }
    process.exit(0);
  });
  process.stdout.write(text);
}

/** The width the help fits, as src/report/width.ts's outputColumns finds it (a test holds the two together). */
function helpColumns({ min, fallback }, env, stdout) {
  const asked = /^\d{1,5}$/.test(env.COLUMNS ?? '') ? Number(env.COLUMNS) : undefined;
  const columns = asked ?? (stdout.isTTY ? stdout.columns : undefined);
  return columns !== undefined && columns > 0 ? Math.max(min, columns) : fallback;
}

module.exports = { start, aloneFlag, helpColumns };
if (require.main === module) start();
