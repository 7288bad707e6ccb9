// Installed as the first module of the installed command is evaluated, before the rest of the tool loads (a few
// hundred ms on a busy host, koffi alone a quarter of a second): a SIGINT or SIGTERM then ends the command with 130,
// as interrupt.ts's handlers do once a command starts, never by the signal (143). Nothing has started that needs
// cleaning up, so leaving at once is right. interrupt.ts removes these handlers when it installs its own.

const early = (name: NodeJS.Signals) => {
  process.stderr.write(`cuda-pipe: Interrupted (${name}) before the command finished.\n`);
  process.exit(130);
};

/** Removes the early handlers: the command's own (interrupt.ts) take over. */
export function releaseEarlySignals(): void {
  process.off('SIGINT', early);
  process.off('SIGTERM', early);
}

process.on('SIGINT', early);
process.on('SIGTERM', early);
