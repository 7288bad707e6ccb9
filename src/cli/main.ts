import { exitQuietlyOnBrokenPipe } from './broken-pipe.js';
import { cliIo } from './io.js';
import { cliMain } from './program.js';

// The installed command: the command line of this process, its exit code set when the command ends. No top-level
// await: the bundle runs this as CommonJS (start.ts).
exitQuietlyOnBrokenPipe(process.stdout);
exitQuietlyOnBrokenPipe(process.stderr);
void cliMain(process.argv, cliIo()).then(async ({ code, contextLost }) => {
  process.exitCode = code;
  // After a lost context a runaway kernel may still hold the GPU and a worker thread may be blocked on it: leave
  // without CUDA's teardown and without joining that thread, either of which could wait for ever.
  if (contextLost) (await import('../cuda/exit.js')).exitNow(code);
});
