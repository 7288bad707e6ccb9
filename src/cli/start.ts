// The installed command's first module (scripts/bundle-cli.mjs builds dist/cli/cuda-pipe.js from it): the early signal
// handlers, then the tool, loaded after them. A signal while the tool loads (most of a second on a busy host) then
// ends the command with 130 rather than by the signal.
import './early-signals.js';

await import('./main.js');
