// The installed command's first module (scripts/bundle-cli.mjs builds dist/cli/ from it): the early signal handlers,
// then the tool, loaded after them. A signal while the tool loads (most of a second on a busy host) then ends the
// command with 130 rather than by the signal. No top-level await here or in what it loads first: the bundle runs its
// chunks as CommonJS, whose code V8 can cache (scripts/bundle-cli.mjs). `--version` and `--help` alone never get
// here: the loader answers them (scripts/cli-loader.cjs).
import './early-signals.js';

void import('./main.js');
