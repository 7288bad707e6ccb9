import type { OutStream } from './io.js';

// Long work that a signal must be able to end: between its slices the event loop turns, and interrupt.ts's handler,
// which runs only then, ends the command at once with 130. Synchronous work holds a signal off until it ends.

/** One turn of the event loop: pending signals are handled before it resolves. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A stream that says when it can take more (process.stdout); a test's collecting stream does not. */
interface Drains {
  once(event: 'drain' | 'close' | 'error', listener: () => void): unknown;
  off(event: 'drain' | 'close' | 'error', listener: () => void): unknown;
}

const drains = (out: OutStream): out is OutStream & Drains => typeof (out as Partial<Drains>).once === 'function';

/** Resolves once `out` drained, or closed or failed (a reader gone is broken-pipe.ts's to handle). */
function drained(out: Drains): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      for (const event of ['drain', 'close', 'error'] as const) out.off(event, done);
      resolve();
    };
    for (const event of ['drain', 'close', 'error'] as const) out.once(event, done);
  });
}

/**
 * Writes `pieces` joined by newlines, and a newline after the last, a piece at a time: each made only when the one
 * before was written, with a turn of the event loop between them, and a wait for a full pipe to drain, so that a
 * long text (a dry run's every op) holds neither a signal off nor all of itself in memory.
 */
export async function writeInTurns(out: OutStream, pieces: Iterable<string>): Promise<void> {
  let first = true;
  for (const piece of pieces) {
    const more = out.write(first ? piece : `\n${piece}`);
    first = false;
    await (more === false && drains(out) ? drained(out) : nextTurn());
  }
  out.write('\n');
}
