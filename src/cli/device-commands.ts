import { type Command, Option } from 'commander';
import { lazy } from './action.js';
import { examplesFor } from './help-width.js';
import { hostMemoryKinds } from './lists.js';
import {
  archFlag,
  collect,
  countList,
  deviceSelection,
  nonNegativeInt,
  nonNegativeNumber,
  orderList,
  positiveInt,
  positiveNumber,
} from './numbers.js';
import {
  bmfOption,
  csvOption,
  deviceOption,
  gabOption,
  junitOption,
  timeoutOption,
  verdictBmfOption,
  verdictCsvOption,
  verdictGabOption,
} from './options.js';
import { waitOption, withKindFlags } from './options.js';
import { checkOutputTarget } from './write-file.js';

// The commands that measure on a GPU (a dry run plans without one), each declared on the program by program.ts in
// the order the help lists them; each one's module is imported only when it runs.

/** `run`: a pipeline measured in every mode, its Result written in the formats asked for. */
export function addRun(program: Command): void {
  const run = program
    .command('run')
    .description('run a load → compute → store pipeline (default: the built-in balanced config)')
    .argument('[config]', 'YAML config file')
    .option('--streams <n>', 'override pipeline.streams', positiveInt)
    .option('--chunks <n>', 'override pipeline.chunks', positiveInt)
    .option('--workers <n>', "override host.workers: the host stage's worker threads", positiveInt)
    .addOption(new Option('--order <order>', 'override pipeline.order').choices(['depth-first', 'breadth-first']))
    .addOption(
      new Option(
        '--mode <mode>',
        'override pipeline.mode: graph also replays each overlapped layout as a CUDA graph',
      ).choices(['stream', 'graph']),
    )
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
    .option(
      '--gate',
      'hold the streams behind a blocking kernel until each rep is issued: times exclude host issue cost',
    )
    .option(
      '--dry-run',
      'print the plan (modes, streams, op counts, bytes) and compile the kernels when NVRTC is here; needs no GPU',
    )
    .option('--ops', 'with --dry-run: list every op of every mode in issue order')
    .option(
      '--arch <sm_XX>',
      'with --dry-run: compile the kernels for this architecture (default: the newest NVRTC supports)',
      archFlag,
    )
    .option('--no-verify', 'skip the check that the overlapped outputs equal the serial ones')
    .option('--no-tracing', 'skip the traced rep of each overlapped mode (the timeline)')
    .addOption(waitOption())
    .addOption(timeoutOption());
  withKindFlags(run)
    .option('--json <file>', 'write the Result document to a file, or - for stdout', checkOutputTarget)
    .option('--md <file>', 'write a Markdown report to a file, or - for stdout', checkOutputTarget)
    .option('--timeline', 'draw the traced rep of each overlapped mode as a Gantt chart after the table')
    .option('--svg <file>', 'write the timeline as a standalone SVG, or - for stdout', checkOutputTarget)
    .option(
      '--html <file>',
      'write one self-contained HTML report (tables, bound, timeline), or - for stdout',
      checkOutputTarget,
    )
    .option(
      '--trace <file>',
      'write Chrome Trace Event JSON for Perfetto and chrome://tracing, or - for stdout',
      checkOutputTarget,
    )
    .addOption(csvOption())
    .addOption(bmfOption())
    .addOption(gabOption())
    .addHelpText('after', examplesFor('run'))
    .action(lazy(async () => (await import('./run.js')).runCommand));
}

/** `sweep`: many layouts raced in one run, per setting of the other axes. */
export function addSweep(program: Command): void {
  const sweep = program
    .command('sweep')
    .description(
      'measure many layouts in one run and find the best: a heat map of speedup over serial, the best layout and its ties',
    )
    .argument('[config]', 'YAML config file (its sweep: section gives default axes)')
    .option('--streams <list>', 'stream counts, e.g. 1,2,4,8', countList)
    .option('--chunks <list>', 'chunk counts, e.g. 1,2,4,8,16,32,64', countList)
    .option('--order <list>', 'issue orders, e.g. depth-first,breadth-first', orderList)
    .option(
      '--set <path=values>',
      'another axis: any scalar of the config and its values, e.g. kernels[0].args[3].int32=530,1060 (repeatable)',
      collect,
      [],
    )
    .option('--max-time <seconds>', 'time for the race of layouts, per setting (default 40)', positiveNumber)
    .option('--exhaustive', 'stop no layout early: measure every one until the noise rule or the time budget stops it')
    .option(
      '--dry-run',
      'print the layouts each setting would race and the time budget, checking every setting; needs no GPU',
    )
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
    .option(
      '--html <file>',
      "write the HTML report with the heat map, the chart and the best layout's timeline",
      checkOutputTarget,
    )
    .addOption(csvOption())
    .addOption(bmfOption())
    .addOption(gabOption())
    .addHelpText('after', examplesFor('sweep'))
    .action(lazy(async () => (await import('./sweep.js')).sweepCommand));
}

/** `probe`: each device's facts, and its copy rates on request. */
export function addProbe(program: Command): void {
  program
    .command('probe')
    .description('report each device: copy engines, priorities, PCIe link, versions; --bandwidth measures copies')
    .option(
      '--device <n|n,m,…|all>',
      'device index, indexes separated by commas, or "all"; two or more add the peer matrix',
      deviceSelection,
      'all',
    )
    .option('--bandwidth', 'measure pinned and pageable H2D, D2H and bidirectional copy bandwidth')
    .option('--size <bytes>', 'bytes per bandwidth copy, with units (256MiB)', '256MiB')
    .option('--reps <n>', 'timed copies per bandwidth figure', positiveInt, 20)
    .option(
      '--json <file>',
      'write the probe as a JSON document to a file, or - for stdout (the tables then go to stderr)',
      checkOutputTarget,
    )
    .addOption(waitOption())
    .addOption(timeoutOption())
    .addHelpText('after', examplesFor('probe'))
    .action(lazy(async () => (await import('./probe.js')).probeCommand));
}

/** `ab`: two configs opened on one GPU, their reps interleaved, a paired verdict per mode. */
export function addAb(program: Command): void {
  program
    .command('ab')
    .description(
      'two pipelines (a kernel change, a layout, a config) compiled and allocated once, their reps interleaved on one GPU: a paired verdict per mode; exit 1 on a slowdown',
    )
    .argument('<A.yaml>', 'the config to compare against (the base)')
    .argument('<B.yaml>', 'the config to judge (the change)')
    .option('--streams <n>', 'override pipeline.streams on both sides', positiveInt)
    .option('--chunks <n>', 'override pipeline.chunks on both sides', positiveInt)
    .addOption(
      new Option('--order <order>', 'override pipeline.order on both sides').choices(['depth-first', 'breadth-first']),
    )
    .addOption(deviceOption())
    .option('--warmup <n>', 'warm-up reps per side and mode', nonNegativeInt)
    .option(
      '--min-pairs <n>',
      "interleaved pairs per mode before the rule may stop it (at least 5, for the sign test's 90% interval)",
      positiveInt,
      10,
    )
    .option(
      '--max-time <seconds>',
      "budget of each mode's interleaved reps: a mode still noisy then stops",
      positiveNumber,
      10,
    )
    .option(
      '--threshold <percent>',
      'the equivalence band ±δ (default 0.5): same only when the 90% interval of the change lies inside it',
      positiveNumber,
    )
    .option(
      '--gate',
      'hold the streams behind a blocking kernel until each rep is issued: times exclude host issue cost',
    )
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
}

/** `overhead`: the host cost of issuing each kind of op in the timed loop. */
export function addOverhead(program: Command): void {
  program
    .command('overhead')
    .description(
      'measure the host cost of issuing one kernel launch, one copy, one event record and one cross-stream wait in the timed loop',
    )
    .addOption(deviceOption())
    .option('--ops <n>', 'ops issued per measurement', positiveInt, 20000)
    .option('--json <file>', 'write the measurement as JSON to a file, or - for stdout', checkOutputTarget)
    .addOption(waitOption())
    .addOption(timeoutOption())
    .addHelpText('after', examplesFor('overhead'))
    .action(lazy(async () => (await import('./overhead.js')).overheadCommand));
}
