import { contextLost } from '../errors.js';

/** Releases what was acquired, newest first; keeps going past a failure so nothing else leaks. */
export class Cleanup {
  private readonly steps: Array<() => void> = [];

  /**
   * Runs `body` with a fresh Cleanup and releases everything afterwards. When `body` fails, its error is the one
   * reported and release failures are dropped; after success, the first release failure is thrown. After an error
   * that lost the CUDA context nothing is released: every step is a CUDA call (or memory CUDA may still be reading),
   * a sticky error fails them all, and behind a runaway kernel a free can block for ever. The process is about to
   * exit, and the driver reclaims the device's memory when it does.
   */
  static async use<T>(body: (cleanup: Cleanup) => T | Promise<T>): Promise<T> {
    const cleanup = new Cleanup();
    let value: T;
    try {
      value = await body(cleanup);
    } catch (error) {
      if (contextLost(error)) cleanup.abandon();
      else cleanup.run();
      throw error;
    }
    const errors = cleanup.run();
    if (errors.length) throw errors[0];
    return value;
  }

  push(step: () => void): void {
    this.steps.push(step);
  }

  /** Steps still to run. */
  get pending(): number {
    return this.steps.length;
  }

  /** Runs every step once and returns the errors they threw, in the order they happened. */
  run(): unknown[] {
    const errors: unknown[] = [];
    while (this.steps.length) {
      const step = this.steps.pop() as () => void;
      try {
        step();
      } catch (error) {
        errors.push(error);
      }
    }
    return errors;
  }

  /** Forgets every step without running it. */
  abandon(): void {
    this.steps.length = 0;
  }
}
