import type { ExitCode } from '../errors.js';

// A command's action: its module imported only when the command runs, so that `--version` and `--help` load
// commander and little else, and its exit code handed back to cliMain (program.ts).

// biome-ignore lint/suspicious/noConfusingVoidType: a command that prints and always succeeds returns nothing.
export function lazy<A extends unknown[]>(load: () => Promise<(...args: A) => Promise<ExitCode | void>>) {
  return async (...args: A) => {
    // From here every command ends with 130 on SIGINT or SIGTERM, whatever it is doing (interrupt.ts).
    (await import('./interrupt.js')).processInterrupts();
    const code = await (await load())(...args);
    if (code) throw new CommandExit(code);
  };
}

/** How a command that ran to its end asks for a non-zero exit code (1: a verdict of slower, say). */
export class CommandExit {
  constructor(readonly code: ExitCode) {}
}
