/**
 * `cuda-pipe ... | head` closes the pipe once `head` has read enough, and the next write to stdout fails with
 * EPIPE. The reader going away is not a failure of ours: stop quietly, with the exit code already decided (0 when
 * none was), instead of dying on an unhandled 'error' event.
 */
export function exitQuietlyOnBrokenPipe(stream: NodeJS.WriteStream = process.stdout): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  });
}
