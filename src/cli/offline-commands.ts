import type { Command } from 'commander';
import { lazy } from './action.js';
import { examplesFor } from './help-width.js';
import { archFlag, chartColumns, positiveNumber } from './numbers.js';
import {
  bmfOption,
  csvOption,
  gabOption,
  junitOption,
  verdictBmfOption,
  verdictCsvOption,
  verdictGabOption,
} from './options.js';
import { checkOutputTarget } from './write-file.js';

// The commands that need no GPU: documents and traces read and rendered again, kernel sources listed and compiled,
// JSON Schemas printed. Each is declared on the program by program.ts in the order the help lists them; each one's
// module is imported only when it runs.

/** `kernels`: the kernel sources and their signatures, compiled on request. */
export function addKernels(program: Command): void {
  program
    .command('kernels')
    .description('list the kernels under kernels/ (or in the given files) with their signatures; --check compiles them')
    .argument('[sources...]', '.cu files to list or check instead of the built-in kernels/')
    .option('--check', 'compile the sources with NVRTC (no GPU needed)')
    .option(
      '--arch <sm_XX>',
      "architecture for --check (default: the device's, else the newest NVRTC supports)",
      archFlag,
    )
    .addHelpText('after', examplesFor('kernels'))
    .action(lazy(async () => (await import('./kernels.js')).kernelsCommand));
}

/** `schema`: the config's, the Result's or the analysis document's JSON Schema. */
export function addSchema(program: Command): void {
  program
    .command('schema')
    .description("print the config file's JSON Schema, for editors; --result prints the Result document's")
    .option('--result', 'print the JSON Schema of the Result document that `run --json` writes')
    .option('--analysis', 'print the JSON Schema of the document that `analyze --json` writes')
    .addHelpText('after', examplesFor('schema'))
    .action(lazy(async () => (await import('./schema.js')).schemaCommand));
}

/** `report`: a saved document re-rendered exactly as measured. */
export function addReport(program: Command): void {
  program
    .command('report')
    .description(
      're-render a saved document (run, sweep, merge, ab or probe --json) as the table, or --md, exactly as measured',
    )
    .argument('<result.json>', 'a file written with --json by `cuda-pipe run`, `sweep`, `merge`, `ab` or `probe`')
    .option(
      '--md <file>',
      'write a Markdown report to a file, or - for stdout (the table then goes to stderr)',
      checkOutputTarget,
    )
    .option(
      '--json <file>',
      'write the document again (Results as one Result document of the current version), or - for stdout',
      checkOutputTarget,
    )
    .option('--svg <file>', 'also write the timeline as SVG', checkOutputTarget)
    .option('--html <file>', 'also write the HTML report', checkOutputTarget)
    .option('--trace <file>', 'also write Chrome Trace Event JSON', checkOutputTarget)
    .addOption(csvOption())
    .addOption(bmfOption())
    .addOption(gabOption())
    .addOption(junitOption())
    .addHelpText('after', examplesFor('report'))
    .action(lazy(async () => (await import('./report.js')).reportCommand));
}

/** `timeline`: a saved Result's traced reps drawn. */
export function addTimeline(program: Command): void {
  program
    .command('timeline')
    .description(
      'draw the traced reps of a saved result: a Gantt chart here, and SVG, HTML or a Chrome trace on request',
    )
    .argument('<result.json>', 'a file written by `cuda-pipe run --json`')
    .option('--svg <file>', 'write the timeline as SVG to a file, or - for stdout', checkOutputTarget)
    .option('--html <file>', 'write a self-contained HTML report to a file, or - for stdout', checkOutputTarget)
    .option(
      '--trace <file>',
      'write Chrome Trace Event JSON (Perfetto, chrome://tracing) to a file, or - for stdout',
      checkOutputTarget,
    )
    .option(
      '--width <columns>',
      "width of the Gantt chart, 20 to 1000 (default: the terminal's, else 100)",
      chartColumns,
    )
    .addHelpText('after', examplesFor('timeline'))
    .action(lazy(async () => (await import('./timeline.js')).timelineCommand));
}

/** `compare`: two sets of Results judged mode by mode. */
export function addCompare(program: Command): void {
  program
    .command('compare')
    .description('compare two result files: faster, slower, same or noisy per config and mode; exit 1 on a slowdown')
    .argument('<baseline.json>', 'results to compare against')
    .argument('<candidate.json>', 'results to judge')
    .option(
      '--threshold <percent>',
      'the equivalence band ±δ (default 1): same only when the 90% interval of the change lies inside it',
      positiveNumber,
    )
    .option('--allow-device-change', 'compare results from different devices')
    .option('--md <file>', 'write a Markdown report to a file, or - for stdout', checkOutputTarget)
    .option('--json <file>', 'write the comparison as JSON to a file, or - for stdout', checkOutputTarget)
    .addOption(verdictCsvOption())
    .addOption(verdictBmfOption())
    .addOption(verdictGabOption())
    .addOption(junitOption())
    .addHelpText('after', examplesFor('compare'))
    .action(lazy(async () => (await import('./compare.js')).compareCommand));
}

/** `merge`: the Results of the ranks of one launch, read together. */
export function addMerge(program: Command): void {
  program
    .command('merge')
    .description(
      'read the Results of many ranks (run --json results/%r.json under mpirun or srun): a table per host and GPU, the total throughput, the slowest GPU',
    )
    .argument('<results...>', 'result files, each one Result or an array of them')
    .option(
      '--json <file>',
      "write every rank's Result as one array (report, compare and timeline read it), or - for stdout",
      checkOutputTarget,
    )
    .addHelpText('after', examplesFor('merge'))
    .action(lazy(async () => (await import('./merge.js')).mergeCommand));
}

/** `analyze`: profilers' traces read into steps, metrics and findings. */
export function addAnalyze(program: Command): void {
  program
    .command('analyze')
    .description(
      "read PyTorch profiler (Kineto) traces, Nsight Systems SQLite exports or `run --trace` files: per device and step the engines' busy time, copy and communication overlap, exposed and idle time, a floor, and findings",
    )
    .argument(
      '<traces...>',
      'trace files, one per rank of one launch: Chrome traces (.json, .json.gz, .pt.trace.json.gz) or Nsight Systems exports (nsys export --type sqlite), each told by its first bytes; JSON streamed; their limits are in docs/reference/cli.md',
    )
    .option(
      '--rates <file>',
      "the floor's link rates: a `probe --bandwidth --json` file or a Result (default: the trace's fastest copies)",
    )
    .option(
      '--ab',
      "two runs of one program, A before a change and B after: two traces, or each launch's ranks with -- between (A0 A1 -- B0 B1); each device's steps are samples, judged faster, slower, same or noisy by compare's rule, rank with rank; exit 1 when B is slower",
    )
    .option('--threshold <percent>', "with --ab: the equivalence band ±δ (default 1), as compare's", positiveNumber)
    .option(
      '--json <file>',
      'write the analysis document to a file, or - for stdout (the text then goes to stderr)',
      checkOutputTarget,
    )
    .option('--md <file>', 'write a Markdown report to a file, or - for stdout', checkOutputTarget)
    .option('--html <file>', 'write a self-contained HTML report to a file, or - for stdout', checkOutputTarget)
    .option(
      '--trace <file>',
      'write the analysed events, steps and findings as Chrome Trace Event JSON (Perfetto) to a file, or - for stdout',
      checkOutputTarget,
    )
    .addHelpText('after', examplesFor('analyze'))
    .action(lazy(async () => (await import('./analyze.js')).analyzeCommand));
}
