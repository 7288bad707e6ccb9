import { Command, CommanderError, Option } from 'commander';
import { CudaPipeError, type ExitCode } from '../errors.js';
import { packageVersion } from '../paths.js';
import { hostMemoryKinds } from './lists.js';
import { nonNegativeInt, nonNegativeNumber, positiveInt, positiveNumber } from './numbers.js';

// Each command lives in its own module, imported only when that command runs, so `--version` and `--help` load
// commander and nothing else.

const program = new Command('cuda-pipe')
  .description('Measure how much overlapping copies and kernels across CUDA streams buys on your GPU.')
  .version(packageVersion(), '-V, --version', 'print the version')
  .option('--verbose', 'print stack traces and extra diagnostics')
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride();

const deviceOption = () => new Option('--device <n>', 'device index').argParser(nonNegativeInt);
const waitOption = () => new Option('--wait <how>', 'how the host waits for a rep to end without blocking: poll the event, or a blocking wait on a worker thread')
  .choices(['poll', 'thread']).default('poll');

program
  .command('run')
  .description('run a load → compute → store pipeline (default: the built-in balanced config)')
  .argument('[config]', 'YAML config file')
  .option('--streams <n>', 'override pipeline.streams', positiveInt)
  .option('--chunks <n>', 'override pipeline.chunks', positiveInt)
  .addOption(new Option('--order <order>', 'override pipeline.order').choices(['depth-first', 'breadth-first']))
  .addOption(new Option('--mode <mode>', 'override pipeline.mode: graph also replays each overlapped layout as a CUDA graph').choices(['stream', 'graph']))
  .option('--host-memory <kinds>', 'run once per host memory kind (pinned,pageable,write-combined,registered, comma-separated; sets the top-level hostMemory, buffers naming their own keep it) and compare them in one table', hostMemoryKinds)
  .addOption(deviceOption())
  .option('--reps <n>', 'time exactly n reps per mode instead of the noise rule', positiveInt)
  .option('--warmup <n>', 'warm-up reps per mode', nonNegativeInt)
  .option('--warmup-time <ms>', 'keep warming up for at least this many milliseconds', nonNegativeNumber)
  .option('--min-reps <n>', 'timed reps before the noise rule may stop', positiveInt)
  .option('--max-noise <percent>', 'noise target in percent (default 0.5)', positiveNumber)
  .option('--max-time <seconds>', 'time budget for one mode\'s timed reps (default 3)', positiveNumber)
  .option('--gate', 'hold the streams behind a blocking kernel until each rep is issued: times exclude host issue cost')
  .option('--dry-run', 'print the plan (streams, ops, bytes) and exit; needs no GPU')
  .option('--no-verify', 'skip the check that the overlapped outputs equal the serial ones')
  .option('--no-trace', 'skip the traced rep of each overlapped mode (the timeline)')
  .addOption(waitOption())
  .option('--json <file>', 'write the Result document to a file, or - for stdout')
  .option('--md <file>', 'write a Markdown report to a file, or - for stdout')
  .action(lazy(async () => (await import('./run.js')).runCommand));

program
  .command('probe')
  .description('report each device: copy engines, priorities, PCIe link, versions; --bandwidth measures copies')
  .option('--device <n|all>', 'device index or "all"', 'all')
  .option('--bandwidth', 'measure pinned and pageable H2D, D2H and bidirectional copy bandwidth')
  .option('--size <bytes>', 'bytes per bandwidth copy, with units (256MiB)', '256MiB')
  .option('--reps <n>', 'timed copies per bandwidth figure', positiveInt, 20)
  .option('--json', 'print a JSON document instead of tables')
  .addOption(waitOption())
  .action(lazy(async () => (await import('./probe.js')).probeCommand));

program
  .command('kernels')
  .description('list the kernels under kernels/ with their signatures; --check compiles them all')
  .option('--check', 'compile every kernel with NVRTC')
  .option('--arch <sm_XX>', 'architecture for --check (default: the device\'s, else the newest NVRTC supports)')
  .action(lazy(async () => (await import('./kernels.js')).kernelsCommand));

program
  .command('schema')
  .description('print the config file\'s JSON Schema, for editors; --result prints the Result document\'s')
  .option('--result', 'print the JSON Schema of the Result document that `run --json` writes')
  .action(lazy(async () => (await import('./schema.js')).schemaCommand));

program
  .command('report')
  .description('re-render a saved result (run --json) as the table, or --md, exactly as measured')
  .argument('<result.json>', 'a file written by `cuda-pipe run --json`')
  .option('--md', 'print Markdown instead of the table')
  .action(lazy(async () => (await import('./report.js')).reportCommand));

program
  .command('compare')
  .description('compare two result files: faster, slower, same or noisy per config and mode; exit 1 on a slowdown')
  .argument('<baseline.json>', 'results to compare against')
  .argument('<candidate.json>', 'results to judge')
  .option('--threshold <percent>', 'smallest change in the median that counts', positiveNumber, 5)
  .option('--allow-device-change', 'compare results from different devices')
  .option('--md <file>', 'write a Markdown report to a file, or - for stdout')
  .option('--json', 'print the comparison as JSON')
  .action(lazy(async () => (await import('./compare.js')).compareCommand));

program
  .command('overhead')
  .description('measure the host cost of issuing one kernel launch and one copy in the timed loop')
  .addOption(deviceOption())
  .option('--ops <n>', 'ops issued per measurement', positiveInt, 20000)
  .option('--json', 'print JSON')
  .addOption(waitOption())
  .action(lazy(async () => (await import('./overhead.js')).overheadCommand));

function lazy<A extends unknown[]>(load: () => Promise<(...args: A) => Promise<ExitCode | void>>) {
  return async (...args: A) => {
    const code = await (await load())(...args);
    if (code) process.exitCode = code;
  };
}

function report(error: unknown, verbose: boolean): ExitCode {
  if (error instanceof CommanderError) {
    // commander already printed its message; help and version end here with code 0.
    return error.exitCode === 0 ? 0 : 2;
  }
  if (error instanceof CudaPipeError) {
    process.stderr.write(`cuda-pipe: ${error.message}\n`);
    if (error.hint) process.stderr.write(`${error.hint}\n`);
    if (verbose && error.stack) process.stderr.write(`\n${error.stack}\n`);
    if (verbose && error.cause instanceof Error && error.cause.stack) process.stderr.write(`caused by: ${error.cause.stack}\n`);
    return error.exitCode;
  }
  // Anything else is a bug in cuda-pipe, not the user's doing: show everything.
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`cuda-pipe: internal error (please report it): ${text}\n`);
  return 4;
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.exitCode = report(error, process.argv.includes('--verbose'));
}
