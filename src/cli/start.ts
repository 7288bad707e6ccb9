// The installed command's first module (scripts/bundle-cli.mjs builds dist/cli/ from it): the early signal handlers,
// then the tool, loaded after them. A signal while the tool loads (most of a second on a busy host) then ends the
// command with 130 rather than by the signal. No top-level await here or in what it loads first: the bundle runs its
// chunks as CommonJS, whose code V8 can cache (scripts/bundle-cli.mjs).
import './early-signals.js';
import { exitQuietlyOnBrokenPipe } from './broken-pipe.js';
import { packageVersion } from '../paths.js';
import { onlyVersion } from './version-flag.js';

// `cuda-pipe --version` alone prints what commander would print (the version and a newline, exit 0) without loading
// commander and the definitions of every command: most of its start (docs/measurements/2026-11-28-cli-start-2/).
if (onlyVersion(process.argv.slice(2))) {
  exitQuietlyOnBrokenPipe(process.stdout);
  process.stdout.write(`${packageVersion()}\n`);
} else {
  void import('./main.js');
}
