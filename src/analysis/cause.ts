import type { FindingCode } from './document.js';
import type { DeviceShape } from '../traces/events.js';
import type { Edit, ReplayGraph } from './graph.js';
import type { LinkRates } from './metrics.js';
import type { StepWindow } from './steps.js';

// What a cause rule (causes.ts, communication.ts) is given and gives back: apart from the rules, so that a rule in
// another file and the list that runs them do not import each other.

export interface Cause {
  readonly code: FindingCode;
  readonly edit: Edit;
  /** The ops the cause is about: their labels name it in the program's terms. */
  readonly ops: readonly number[];
  /** Figures the finding's sentence quotes. */
  readonly facts: CauseFacts;
}

export interface CauseFacts {
  /** How many times (copies, waits, synchronizes, launches) the cause occurs in the trace. */
  readonly count: number;
  /** Streams the cause is on, as the trace names them. */
  readonly streams: readonly string[];
  /** A rate the sentence quotes (the pinned link's, GB/s), where one applies. */
  readonly rateGbPerSecond?: number;
  /** The rate the cause ran at (GB/s), where one applies. */
  readonly observedGbPerSecond?: number;
}

export interface CauseContext {
  readonly graph: ReplayGraph;
  /** Each direction's pinned link rate, GB/s: the rate a pinned copy moves at. */
  readonly pinned: LinkRates;
  /** The steps on the GPU's clock, with their host spans where the trace marks them. */
  readonly windows: readonly StepWindow[];
  /** The device's multiprocessors, where the trace gives them: what contention between kernels is reckoned from. */
  readonly device: DeviceShape | null;
}
