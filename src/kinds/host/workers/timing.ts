/** When a task waited and ran, on the main thread's performance.now() clock (a worker's times are converted). */
export interface TaskTiming {
  readonly worker: number;
  readonly queuedMs: number;
  readonly startedMs: number;
  readonly endedMs: number;
}

export interface TaskResult {
  readonly value: unknown;
  readonly timing: TaskTiming;
}

/** A task's timing on a run's clock: milliseconds from `zeroMs`, the performance.now() the run's times count from. */
export function onClock(timing: TaskTiming, zeroMs: number): TaskTiming {
  return {
    worker: timing.worker,
    queuedMs: timing.queuedMs - zeroMs,
    startedMs: timing.startedMs - zeroMs,
    endedMs: timing.endedMs - zeroMs,
  };
}
