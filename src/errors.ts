// Every failure the user can meet is one of these classes; the top-level catch in src/cli/program.ts maps the class
// to the exit code from DESIGN.md and prints `message` (and `hint`, when there is one) as one paragraph.

/** 70 is sysexits' EX_SOFTWARE: a bug in cuda-pipe, kept apart from 4 so that a crash never reads as a CUDA failure. */
export type ExitCode = 0 | 1 | 2 | 3 | 4 | 70 | 130;

/** Every exit code and what it means, for `--help` and the table in docs/reference/cli.md. */
export const EXIT_CODES: ReadonlyArray<readonly [ExitCode, string]> = [
  [0, 'success'],
  [1, 'the measurement says no: outputs differ, or compare, ab or analyze --ab found a slowdown'],
  [2, 'usage or config error: bad flag, bad YAML, unreadable file, kernel that does not match its arguments'],
  [3, 'environment: no libcudart or libnvrtc, no driver, no device'],
  [
    4,
    'failure while running: out of memory, a faulting kernel, a rep past its deadline, a host stage function that threw',
  ],
  [70, 'internal error: a bug in cuda-pipe (please report it)'],
  [130, 'interrupted (Ctrl-C, SIGTERM): stopped at a rep boundary and wrote nothing'],
];

export const INTERNAL_ERROR_EXIT = 70 as const;

export abstract class CudaPipeError extends Error {
  abstract readonly exitCode: ExitCode;
  /** What the user can do about it; printed after the message. */
  readonly hint: string | undefined;

  constructor(message: string, options: { hint?: string | undefined; cause?: unknown } = {}) {
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
  /**
   * The CUDA context cannot be trusted any more: a sticky error (every later call returns it) or a rep past its
   * deadline (a runaway kernel still holds the GPU, so a free or a synchronize could block for ever). Nothing may
   * touch CUDA after one of these: cleanup is skipped and the process exits without CUDA's own teardown.
   */
  readonly contextLost: boolean;

  constructor(message: string, options: { hint?: string | undefined; cause?: unknown; contextLost?: boolean } = {}) {
    super(message, options);
    this.contextLost = options.contextLost ?? (options.cause instanceof DeviceFailure && options.cause.contextLost);
  }
}

/** True for an error after which no CUDA call may be made (see DeviceFailure.contextLost). */
export const contextLost = (error: unknown): boolean =>
  (error instanceof DeviceFailure || error instanceof Interrupted) && error.contextLost;

/**
 * Ctrl-C or SIGTERM: the run stopped at a rep boundary, released the device and wrote nothing; or, where a rep could
 * not end (a collective waiting for a peer), NCCL's communicators were aborted and the process leaves without
 * CUDA's teardown (`contextLost`), as after a rep past its deadline.
 */
export class Interrupted extends CudaPipeError {
  readonly exitCode = 130 as const;
  readonly contextLost: boolean;

  constructor(message: string, options: { hint?: string | undefined; cause?: unknown; contextLost?: boolean } = {}) {
    super(message, options);
    this.contextLost = options.contextLost ?? false;
  }
}
