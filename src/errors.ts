// Every failure the user can meet is one of these classes; the top-level catch in src/cli/main.ts maps the class
// to the exit code from DESIGN.md and prints `message` (and `hint`, when there is one) as one paragraph.

export type ExitCode = 0 | 1 | 2 | 3 | 4;

export abstract class CudaPipeError extends Error {
  abstract readonly exitCode: ExitCode;
  /** What the user can do about it; printed after the message. */
  readonly hint: string | undefined;

  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.hint = options.hint;
  }
}

/** The measurement says no: a verification mismatch, a regression found by `compare`. */
export class MeasurementFailure extends CudaPipeError {
  readonly exitCode = 1 as const;
}

/** Bad flags, bad YAML, a config that cannot be planned, a kernel that does not match its arguments. */
export class UsageError extends CudaPipeError {
  readonly exitCode = 2 as const;
}

/** The machine cannot run us: no libcudart or libnvrtc, no driver, no device. */
export class EnvironmentError extends CudaPipeError {
  readonly exitCode = 3 as const;
}

/** CUDA failed while running: out of memory, an illegal address in a kernel, a launch failure. */
export class DeviceFailure extends CudaPipeError {
  readonly exitCode = 4 as const;
}
