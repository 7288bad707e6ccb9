import { type Command, Option } from 'commander';
import { KIND_FLAGS } from './kind-flags.js';
import { deviceFlag, timeoutSeconds } from './numbers.js';
import { checkOutputTarget } from './write-file.js';

// The options several commands share, each made anew for every command that takes it (commander keeps an option
// in the command it is added to), so that a flag reads and checks the same wherever it is given.

export const deviceOption = () => new Option('--device <n>', 'device index').argParser(deviceFlag);
/** The flags the stage kinds add to the commands that run a config (kinds/api/flags.ts), in the list's order. */
export const withKindFlags = (command: Command): Command =>
  KIND_FLAGS.reduce((c, flag) => c.addOption(new Option(flag.option, flag.description)), command);

// The exports for spreadsheets and CI dashboards, the same in every command that writes Results.
export const csvOption = () =>
  new Option('--csv <file>', 'write one CSV row per mode (times in ms), or - for stdout').argParser(checkOutputTarget);
export const bmfOption = () =>
  new Option(
    '--bmf <file>',
    "write Bencher Metric Format (each mode's latency in ns, lower and upper its quartiles), or - for stdout",
  ).argParser(checkOutputTarget);
export const gabOption = () =>
  new Option(
    '--gab <file>',
    "write github-action-benchmark's customSmallerIsBetter array (ms, range ± half the quartiles), or - for stdout",
  ).argParser(checkOutputTarget);
export const junitOption = () =>
  new Option(
    '--junit <file>',
    'write JUnit XML: a test case per gated mode, failed when slower, skipped when noisy; or - for stdout',
  ).argParser(checkOutputTarget);
// The verdicts' formats for CI, in every command that judges B against A: the same three, each with the change, and
// JUnit.
export const verdictCsvOption = () =>
  new Option(
    '--csv <file>',
    'write one CSV row per judged mode (both medians, the change, its interval, the verdict), or - for stdout',
  ).argParser(checkOutputTarget);
export const verdictBmfOption = () =>
  new Option(
    '--bmf <file>',
    "write Bencher Metric Format (B's latency in ns with its quartiles, and b-over-a with its interval), or - for stdout",
  ).argParser(checkOutputTarget);
export const verdictGabOption = () =>
  new Option(
    '--gab <file>',
    "write github-action-benchmark's customSmallerIsBetter array (B in ms, the verdict in extra), or - for stdout",
  ).argParser(checkOutputTarget);

export const waitOption = () =>
  new Option(
    '--wait <how>',
    'how the host waits for a rep to end without blocking: poll the event, or a blocking wait on a worker thread',
  )
    .choices(['poll', 'thread'])
    .default('poll');
export const timeoutOption = () =>
  new Option(
    '--timeout <seconds>',
    'longest wait for a rep of a mode not yet timed (default 60); later reps may take 20 times the slowest seen, at least 1 s',
  ).argParser(timeoutSeconds);
