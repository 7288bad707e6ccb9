/** Releases what was acquired, newest first; keeps going past a failure so nothing else leaks. */
export class Cleanup {
  private readonly steps: Array<() => void> = [];

  /**
   * Runs `body` with a fresh Cleanup and releases everything afterwards. When `body` fails, its error is the one
   * reported and release failures are dropped (a dead CUDA context fails every free); after success, the first
   * release failure is thrown.
   */
  static async use<T>(body: (cleanup: Cleanup) => T | Promise<T>): Promise<T> {
    const cleanup = new Cleanup();
    let value: T;
    try {
      value = await body(cleanup);
    } catch (error) {
      cleanup.run();
      throw error;
    }
    const errors = cleanup.run();
    if (errors.length) throw errors[0];
    return value;
  }

  push(step: () => void): void {
    this.steps.push(step);
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
}
