import { Command, Option } from 'commander';
import { contextLost, type ExitCode } from '../errors.js';
import { packageVersion } from '../paths.js';
import {
  archFlag,
  chartColumns,
  collect,
  countList,
  deviceFlag,
  deviceSelection,
  nonNegativeInt,
  nonNegativeNumber,
  orderList,
  positiveInt,
  positiveNumber,
  timeoutSeconds,
} from './numbers.js';
import { exitCodeFor } from './exit-code.js';
import { type CommandName, commandHelp, type EnvironmentList, topLevelHelp } from './help-text.js';
import { fitItem, fitLines, outputColumns, paragraphColumns } from '../report/width.js';
import { checkOutputTarget } from './write-file.js';
import { hostMemoryKinds } from './lists.js';
import { KIND_FLAGS } from './kind-flags.js';
import { cliIo, type CliIo, withCliIo } from './io.js';

// Each command lives in its own module, imported only when that command runs, so `--version` and `--help` load
// commander and little else (the help's list of the stage kinds' variables is built into the bundle, see below).

// Help and commander's own errors fit the width of the stream they go to, as every other output does (issue 39):
// each option and command is laid out by width.ts' fitItem, its description beside it or, where the column would be
// too narrow (the command list at 80 columns), under it.
const columnsOf = (error: boolean) => outputColumns(error ? cliIo().stderr : cliIo().stdout);
const examplesFor = (command: CommandName) => (context: { error: boolean }) => commandHelp(command, columnsOf(context.error));

// The stage kinds' environment variables for the top-level help, loaded by cliMain only where that help may print.
let kindEnvironment: EnvironmentList = [];
// The CLI's bundle holds them as JSON, read from the kinds when it is built (scripts/bundle-cli.mjs): loading the
// kinds (and zod) took longer than the rest of `--help`. Run from the sources, it is not defined.
declare const CUDA_PIPE_KIND_ENVIRONMENT: string | undefined;
async function loadKindEnvironment(): Promise<EnvironmentList> {
  if (typeof CUDA_PIPE_KIND_ENVIRONMENT === 'string') return JSON.parse(CUDA_PIPE_KIND_ENVIRONMENT) as EnvironmentList;
  return (await import('../kinds/index.js')).KIND_ENVIRONMENT;
}

const program = new Command('cuda-pipe')
  .description('Measure how much overlapping copies and kernels across CUDA streams buys on your GPU.')
  .version(packageVersion(), '-V, --version', 'print the version')
  .option('--verbose', 'print stack traces and extra diagnostics')
  .showHelpAfterError('(run with --help for usage)')
  .addHelpText('after', (context) => topLevelHelp(kindEnvironment, columnsOf(context.error)))
  .configureOutput({
    writeOut: (text) => cliIo().stdout.write(fitLines(text, columnsOf(false))),
    writeErr: (text) => cliIo().stderr.write(fitLines(text, paragraphColumns(cliIo().stderr))),
    getOutHelpWidth: () => columnsOf(false),
    getErrHelpWidth: () => columnsOf(true),
  })
  .configureHelp({ formatItem: (term, termWidth, description, helper) => fitItem(term, description, helper.helpWidth ?? columnsOf(false), { termWidth }) })
  .exitOverride();

const deviceOption = () => new Option('--device <n>', 'device index').argParser(deviceFlag);
/** The flags the stage kinds add to the commands that run a config (kinds/api/flags.ts), in the list's order. */
const withKindFlags = (command: Command): Command => KIND_FLAGS.reduce((c, flag) => c.addOption(new Option(flag.option, flag.description)), command);

// The exports for spreadsheets and CI dashboards, the same in every command that writes Results.
const csvOption = () => new Option('--csv <file>', 'write one CSV row per mode (times in ms), or - for stdout').argParser(checkOutputTarget);
const bmfOption = () =>
  new Option('--bmf <file>', "write Bencher Metric Format (each mode's latency in ns, lower and upper its quartiles), or - for stdout").argParser(checkOutputTarget);
const gabOption = () =>
  new Option('--gab <file>', "write github-action-benchmark's customSmallerIsBetter array (ms, range ± half the quartiles), or - for stdout").argParser(checkOutputTarget);
const junitOption = () =>
  new Option('--junit <file>', 'write JUnit XML: a test case per gated mode, failed when slower, skipped when noisy; or - for stdout').argParser(checkOutputTarget);
// The verdicts' formats for CI, in every command that judges B against A: the same three, each with the change, and JUnit.
const verdictCsvOption = () =>
  new Option('--csv <file>', 'write one CSV row per judged mode (both medians, the change, its interval, the verdict), or - for stdout').argParser(checkOutputTarget);
const verdictBmfOption = () =>
  new Option('--bmf <file>', "write Bencher Metric Format (B's latency in ns with its quartiles, and b-over-a with its interval), or - for stdout").argParser(checkOutputTarget);
const verdictGabOption = () =>
  new Option('--gab <file>', "write github-action-benchmark's customSmallerIsBetter array (B in ms, the verdict in extra), or - for stdout").argParser(checkOutputTarget);

const waitOption = () =>
  new Option('--wait <how>', 'how the host waits for a rep to end without blocking: poll the event, or a blocking wait on a worker thread')
    .choices(['poll', 'thread'])
    .default('poll');
const timeoutOption = () =>
  new Option('--timeout <seconds>', 'longest wait for a rep of a mode not yet timed (default 60); later reps may take 20 times the slowest seen, at least 1 s').argParser(
    timeoutSeconds,
  );

const run = program
  .command('run')
  .description('run a load → compute → store pipeline (default: the built-in balanced config)')
  .argument('[config]', 'YAML config file')
  .option('--streams <n>', 'override pipeline.streams', positiveInt)
  .option('--chunks <n>', 'override pipeline.chunks', positiveInt)
  .option('--workers <n>', "override host.workers: the host stage's worker threads", positiveInt)
  .addOption(new Option('--order <order>', 'override pipeline.order').choices(['depth-first', 'breadth-first']))
  .addOption(new Option('--mode <mode>', 'override pipeline.mode: graph also replays each overlapped layout as a CUDA graph').choices(['stream', 'graph']))
  .option(
    '--host-memory <kinds>',
    'run once per host memory kind (pinned,pageable,write-combined,registered, comma-separated; sets the top-level hostMemory, buffers naming their own keep it) and compare them in one table',
    hostMemoryKinds,
  )
  .addOption(deviceOption())
  .option(
    '--devices <list|all>',
    'several GPUs in one run (sets devices), e.g. 0,1 or all: the input split across them; with pipeline.handoff, one pipeline across two; with a collective stage (configs/ddp.yaml), data-parallel: the whole pipeline on every GPU, one NCCL rank each (ncclCommInitAll), stream mode only',
    deviceSelection,
  )
  .option('--reps <n>', 'time exactly n reps per mode instead of the noise rule', positiveInt)
  .option('--warmup <n>', 'warm-up reps per mode', nonNegativeInt)
  .option('--warmup-time <ms>', 'keep warming up for at least this many milliseconds', nonNegativeNumber)
  .option('--min-reps <n>', 'timed reps before the noise rule may stop', positiveInt)
  .option('--max-noise <percent>', 'noise target in percent (default 0.5)', positiveNumber)
  .option('--max-time <seconds>', "time budget for one mode's timed reps (default 3)", positiveNumber)
  .option('--gate', 'hold the streams behind a blocking kernel until each rep is issued: times exclude host issue cost')
  .option('--dry-run', 'print the plan (modes, streams, op counts, bytes) and compile the kernels when NVRTC is here; needs no GPU')
  .option('--ops', 'with --dry-run: list every op of every mode in issue order')
  .option('--arch <sm_XX>', 'with --dry-run: compile the kernels for this architecture (default: the newest NVRTC supports)', archFlag)
  .option('--no-verify', 'skip the check that the overlapped outputs equal the serial ones')
  .option('--no-tracing', 'skip the traced rep of each overlapped mode (the timeline)')
  .addOption(waitOption())
  .addOption(timeoutOption());
withKindFlags(run)
  .option('--json <file>', 'write the Result document to a file, or - for stdout', checkOutputTarget)
  .option('--md <file>', 'write a Markdown report to a file, or - for stdout', checkOutputTarget)
  .option('--timeline', 'draw the traced rep of each overlapped mode as a Gantt chart after the table')
  .option('--svg <file>', 'write the timeline as a standalone SVG, or - for stdout', checkOutputTarget)
  .option('--html <file>', 'write one self-contained HTML report (tables, bound, timeline), or - for stdout', checkOutputTarget)
  .option('--trace <file>', 'write Chrome Trace Event JSON for Perfetto and chrome://tracing, or - for stdout', checkOutputTarget)
  .addOption(csvOption())
  .addOption(bmfOption())
  .addOption(gabOption())
  .addHelpText('after', examplesFor('run'))
  .action(lazy(async () => (await import('./run.js')).runCommand));

const sweep = program
  .command('sweep')
  .description('measure many layouts in one run and find the best: a heat map of speedup over serial, the best layout and its ties')
  .argument('[config]', 'YAML config file (its sweep: section gives default axes)')
  .option('--streams <list>', 'stream counts, e.g. 1,2,4,8', countList)
  .option('--chunks <list>', 'chunk counts, e.g. 1,2,4,8,16,32,64', countList)
  .option('--order <list>', 'issue orders, e.g. depth-first,breadth-first', orderList)
  .option('--set <path=values>', 'another axis: any scalar of the config and its values, e.g. kernels[0].args[3].int32=530,1060 (repeatable)', collect, [])
  .option('--max-time <seconds>', 'time for the race of layouts, per setting (default 40)', positiveNumber)
  .option('--exhaustive', 'stop no layout early: measure every one until the noise rule or the time budget stops it')
  .option('--dry-run', 'print the layouts each setting would race and the time budget, checking every setting; needs no GPU')
  .addOption(deviceOption())
  .option(
    '--devices <list|all>',
    'several GPUs (sets devices), e.g. 0,1 or all: with a collective stage (configs/ddp.yaml), every layout data-parallel over them, one NCCL rank each, to find the best bucket count; a config without one sweeps on one device',
    deviceSelection,
  )
  .option('--gate', 'hold each rep until it is issued: times exclude host issue cost')
  .option('--no-verify', 'skip the check that every layout computes what serial does')
  .addOption(waitOption());
withKindFlags(sweep)
  .option('--json <file>', 'write the Results (one per setting) to a file, or - for stdout', checkOutputTarget)
  .option('--md <file>', 'write the heat map as Markdown, or - for stdout', checkOutputTarget)
  .option('--svg <file>', 'write speedup against chunk count as SVG, or - for stdout', checkOutputTarget)
  .option('--html <file>', "write the HTML report with the heat map, the chart and the best layout's timeline", checkOutputTarget)
  .addOption(csvOption())
  .addOption(bmfOption())
  .addOption(gabOption())
  .addHelpText('after', examplesFor('sweep'))
  .action(lazy(async () => (await import('./sweep.js')).sweepCommand));

program
  .command('probe')
  .description('report each device: copy engines, priorities, PCIe link, versions; --bandwidth measures copies')
  .option('--device <n|n,m,…|all>', 'device index, indexes separated by commas, or "all"; two or more add the peer matrix', deviceSelection, 'all')
  .option('--bandwidth', 'measure pinned and pageable H2D, D2H and bidirectional copy bandwidth')
  .option('--size <bytes>', 'bytes per bandwidth copy, with units (256MiB)', '256MiB')
  .option('--reps <n>', 'timed copies per bandwidth figure', positiveInt, 20)
  .option('--json <file>', 'write the probe as a JSON document to a file, or - for stdout (the tables then go to stderr)', checkOutputTarget)
  .addOption(waitOption())
  .addOption(timeoutOption())
  .addHelpText('after', examplesFor('probe'))
  .action(lazy(async () => (await import('./probe.js')).probeCommand));

program
  .command('kernels')
  .description('list the kernels under kernels/ (or in the given files) with their signatures; --check compiles them')
  .argument('[sources...]', '.cu files to list or check instead of the built-in kernels/')
  .option('--check', 'compile the sources with NVRTC (no GPU needed)')
  .option('--arch <sm_XX>', "architecture for --check (default: the device's, else the newest NVRTC supports)", archFlag)
  .addHelpText('after', examplesFor('kernels'))
  .action(lazy(async () => (await import('./kernels.js')).kernelsCommand));

program
  .command('schema')
  .description("print the config file's JSON Schema, for editors; --result prints the Result document's")
  .option('--result', 'print the JSON Schema of the Result document that `run --json` writes')
  .option('--analysis', 'print the JSON Schema of the document that `analyze --json` writes')
  .addHelpText('after', examplesFor('schema'))
  .action(lazy(async () => (await import('./schema.js')).schemaCommand));

program
  .command('report')
  .description('re-render a saved document (run, sweep, merge, ab or probe --json) as the table, or --md, exactly as measured')
  .argument('<result.json>', 'a file written with --json by `cuda-pipe run`, `sweep`, `merge`, `ab` or `probe`')
  .option('--md <file>', 'write a Markdown report to a file, or - for stdout (the table then goes to stderr)', checkOutputTarget)
  .option('--json <file>', 'write the document again (Results as one Result document of the current version), or - for stdout', checkOutputTarget)
  .option('--svg <file>', 'also write the timeline as SVG', checkOutputTarget)
  .option('--html <file>', 'also write the HTML report', checkOutputTarget)
  .option('--trace <file>', 'also write Chrome Trace Event JSON', checkOutputTarget)
  .addOption(csvOption())
  .addOption(bmfOption())
  .addOption(gabOption())
  .addOption(junitOption())
  .addHelpText('after', examplesFor('report'))
  .action(lazy(async () => (await import('./report.js')).reportCommand));

program
  .command('timeline')
  .description('draw the traced reps of a saved result: a Gantt chart here, and SVG, HTML or a Chrome trace on request')
  .argument('<result.json>', 'a file written by `cuda-pipe run --json`')
  .option('--svg <file>', 'write the timeline as SVG to a file, or - for stdout', checkOutputTarget)
  .option('--html <file>', 'write a self-contained HTML report to a file, or - for stdout', checkOutputTarget)
  .option('--trace <file>', 'write Chrome Trace Event JSON (Perfetto, chrome://tracing) to a file, or - for stdout', checkOutputTarget)
  .option('--width <columns>', "width of the Gantt chart, 20 to 1000 (default: the terminal's, else 100)", chartColumns)
  .addHelpText('after', examplesFor('timeline'))
  .action(lazy(async () => (await import('./timeline.js')).timelineCommand));

program
  .command('compare')
  .description('compare two result files: faster, slower, same or noisy per config and mode; exit 1 on a slowdown')
  .argument('<baseline.json>', 'results to compare against')
  .argument('<candidate.json>', 'results to judge')
  .option('--threshold <percent>', 'the equivalence band ±δ (default 1): same only when the 90% interval of the change lies inside it', positiveNumber)
  .option('--allow-device-change', 'compare results from different devices')
  .option('--md <file>', 'write a Markdown report to a file, or - for stdout', checkOutputTarget)
  .option('--json <file>', 'write the comparison as JSON to a file, or - for stdout', checkOutputTarget)
  .addOption(verdictCsvOption())
  .addOption(verdictBmfOption())
  .addOption(verdictGabOption())
  .addOption(junitOption())
  .addHelpText('after', examplesFor('compare'))
  .action(lazy(async () => (await import('./compare.js')).compareCommand));

program
  .command('ab')
  .description(
    'two pipelines (a kernel change, a layout, a config) compiled and allocated once, their reps interleaved on one GPU: a paired verdict per mode; exit 1 on a slowdown',
  )
  .argument('<A.yaml>', 'the config to compare against (the base)')
  .argument('<B.yaml>', 'the config to judge (the change)')
  .option('--streams <n>', 'override pipeline.streams on both sides', positiveInt)
  .option('--chunks <n>', 'override pipeline.chunks on both sides', positiveInt)
  .addOption(new Option('--order <order>', 'override pipeline.order on both sides').choices(['depth-first', 'breadth-first']))
  .addOption(deviceOption())
  .option('--warmup <n>', 'warm-up reps per side and mode', nonNegativeInt)
  .option('--min-pairs <n>', "interleaved pairs per mode before the rule may stop it (at least 5, for the sign test's 90% interval)", positiveInt, 10)
  .option('--max-time <seconds>', "budget of each mode's interleaved reps: a mode still noisy then stops", positiveNumber, 10)
  .option('--threshold <percent>', 'the equivalence band ±δ (default 0.5): same only when the 90% interval of the change lies inside it', positiveNumber)
  .option('--gate', 'hold the streams behind a blocking kernel until each rep is issued: times exclude host issue cost')
  .option('--no-verify', "skip the check that each side's overlapped outputs equal its serial ones")
  .addOption(waitOption())
  .addOption(timeoutOption())
  .option('--json <file>', 'write the A/B document to a file, or - for stdout', checkOutputTarget)
  .option('--md <file>', 'write a Markdown report to a file, or - for stdout', checkOutputTarget)
  .addOption(verdictCsvOption())
  .addOption(verdictBmfOption())
  .addOption(verdictGabOption())
  .addOption(junitOption())
  .addHelpText('after', examplesFor('ab'))
  .action(lazy(async () => (await import('./ab.js')).abCommand));

program
  .command('merge')
  .description('read the Results of many ranks (run --json results/%r.json under mpirun or srun): a table per host and GPU, the total throughput, the slowest GPU')
  .argument('<results...>', 'result files, each one Result or an array of them')
  .option('--json <file>', "write every rank's Result as one array (report, compare and timeline read it), or - for stdout", checkOutputTarget)
  .addHelpText('after', examplesFor('merge'))
  .action(lazy(async () => (await import('./merge.js')).mergeCommand));

program
  .command('analyze')
  .description(
    "read PyTorch profiler (Kineto) traces, Nsight Systems SQLite exports or `run --trace` files: per device and step the engines' busy time, copy and communication overlap, exposed and idle time, a floor, and findings",
  )
  .argument(
    '<traces...>',
    'trace files, one per rank of one launch: Chrome traces (.json, .json.gz, .pt.trace.json.gz) or Nsight Systems exports (nsys export --type sqlite), each told by its first bytes; JSON streamed; their limits are in docs/reference/cli.md',
  )
  .option('--rates <file>', "the floor's link rates: a `probe --bandwidth --json` file or a Result (default: the trace's fastest copies)")
  .option(
    '--ab',
    "two runs of one program, A before a change and B after: two traces, or each launch's ranks with -- between (A0 A1 -- B0 B1); each device's steps are samples, judged faster, slower, same or noisy by compare's rule, rank with rank; exit 1 when B is slower",
  )
  .option('--threshold <percent>', "with --ab: the equivalence band ±δ (default 1), as compare's", positiveNumber)
  .option('--json <file>', 'write the analysis document to a file, or - for stdout (the text then goes to stderr)', checkOutputTarget)
  .option('--md <file>', 'write a Markdown report to a file, or - for stdout', checkOutputTarget)
  .option('--html <file>', 'write a self-contained HTML report to a file, or - for stdout', checkOutputTarget)
  .option('--trace <file>', 'write the analysed events, steps and findings as Chrome Trace Event JSON (Perfetto) to a file, or - for stdout', checkOutputTarget)
  .addHelpText('after', examplesFor('analyze'))
  .action(lazy(async () => (await import('./analyze.js')).analyzeCommand));

program
  .command('overhead')
  .description('measure the host cost of issuing one kernel launch, one copy, one event record and one cross-stream wait in the timed loop')
  .addOption(deviceOption())
  .option('--ops <n>', 'ops issued per measurement', positiveInt, 20000)
  .option('--json <file>', 'write the measurement as JSON to a file, or - for stdout', checkOutputTarget)
  .addOption(waitOption())
  .addOption(timeoutOption())
  .addHelpText('after', examplesFor('overhead'))
  .action(lazy(async () => (await import('./overhead.js')).overheadCommand));

// biome-ignore lint/suspicious/noConfusingVoidType: commands that print and always succeed are declared as returning nothing.
function lazy<A extends unknown[]>(load: () => Promise<(...args: A) => Promise<ExitCode | void>>) {
  return async (...args: A) => {
    // From here every command ends with 130 on SIGINT or SIGTERM, whatever it is doing (interrupt.ts).
    (await import('./interrupt.js')).processInterrupts();
    const code = await (await load())(...args);
    if (code) throw new CommandExit(code);
  };
}

/** How a command that ran to its end asks for a non-zero exit code (1: a verdict of slower, say). */
class CommandExit {
  constructor(readonly code: ExitCode) {}
}

/**
 * Runs one command line (`argv` as process.argv gives it: node, the script, then the arguments) with its text going
 * to `io`, and returns the exit code. Nothing here ends the process: src/cli/main.ts does, for the installed tool.
 */
export async function cliMain(argv: readonly string[], io: Omit<CliIo, 'argv'>): Promise<{ code: ExitCode | 0; contextLost: boolean }> {
  return withCliIo({ ...io, argv }, async () => {
    try {
      if (mayPrintTopLevelHelp(argv.slice(2))) kindEnvironment = await loadKindEnvironment();
      await program.parseAsync([...argv]);
      return { code: 0, contextLost: false };
    } catch (error) {
      if (error instanceof CommandExit) return { code: error.code, contextLost: false };
      const code = exitCodeFor(error, argv.includes('--verbose'), (text) => io.stderr.write(text), paragraphColumns(io.stderr));
      return { code, contextLost: contextLost(error) };
    }
  });
}

/**
 * Whether commander may print the top-level help for these arguments, whose environment section lists the stage
 * kinds' variables: loading the kinds (and zod) is most of a start, so `--version` and every command skip it. Only a
 * command (the first word that is not a flag) or `--version` as the first argument rules the help out; anything else
 * loads them (`--help`, no command, an unknown one, `help`), which at worst costs the time.
 */
export function mayPrintTopLevelHelp(args: readonly string[]): boolean {
  if (args[0] === '-V' || args[0] === '--version') return false;
  const command = args.find((arg) => !arg.startsWith('-'));
  return command === undefined || command === 'help' || !program.commands.some((c) => c.name() === command);
}
