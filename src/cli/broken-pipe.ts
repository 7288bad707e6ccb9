import { describeFileError } from '../files/errno.js';

/**
 * `cuda-pipe ... | head` closes the pipe once `head` has read enough, and the next write to stdout fails with
 * EPIPE. The reader going away is not a failure of ours: stop quietly, with the exit code already decided (0 when
 * none was), instead of dying on an unhandled 'error' event. Any other failure to write (stdout redirected to a
 * full disk) is the environment's: one line on stderr and exit 3, never a report of success.
 */
export function exitQuietlyOnBrokenPipe(stream: NodeJS.WriteStream = process.stdout): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') {
      if (stream !== process.stderr)
        process.stderr.write(
          `cuda-pipe: Cannot write to ${stream === process.stdout ? 'stdout' : 'an output'}: ${describeFileError(error)}.\n`,
        );
      process.exit(3);
    }
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  });
}
