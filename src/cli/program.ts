import { Command } from 'commander';
import { contextLost, type ExitCode } from '../errors.js';
import { packageVersion } from '../paths.js';
import { fitItem, fitLines, paragraphColumns } from '../report/width.js';
import { CommandExit } from './action.js';
import { addAb, addOverhead, addProbe, addRun, addSweep } from './device-commands.js';
import { exitCodeFor } from './exit-code.js';
import { type EnvironmentList, topLevelHelp } from './help-text.js';
import { columnsOf } from './help-width.js';
import { type CliIo, cliIo, withCliIo } from './io.js';
import { addAnalyze, addCompare, addKernels, addMerge, addReport, addSchema, addTimeline } from './offline-commands.js';

// The program: its commands (device-commands.ts and offline-commands.ts declare them), its help and cliMain, which
// runs one command line. Each command lives in its own module, imported only when that command runs, so `--version`
// and `--help` load commander and little else (the help's list of the stage kinds' variables is built into the
// bundle, see below).

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
  .configureHelp({
    formatItem: (term, termWidth, description, helper) =>
      fitItem(term, description, helper.helpWidth ?? columnsOf(false), { termWidth }),
  })
  .exitOverride();

// In the order the help lists them.
addRun(program);
addSweep(program);
addProbe(program);
addKernels(program);
addSchema(program);
addReport(program);
addTimeline(program);
addCompare(program);
addAb(program);
addMerge(program);
addAnalyze(program);
addOverhead(program);

/**
 * Runs one command line (`argv` as process.argv gives it: node, the script, then the arguments) with its text going
 * to `io`, and returns the exit code. Nothing here ends the process: src/cli/main.ts does, for the installed tool.
 */
export async function cliMain(
  argv: readonly string[],
  io: Omit<CliIo, 'argv'>,
): Promise<{ code: ExitCode | 0; contextLost: boolean }> {
  return withCliIo({ ...io, argv }, async () => {
    try {
      if (mayPrintTopLevelHelp(argv.slice(2))) kindEnvironment = await loadKindEnvironment();
      await program.parseAsync([...argv]);
      return { code: 0, contextLost: false };
    } catch (error) {
      if (error instanceof CommandExit) return { code: error.code, contextLost: false };
      const code = exitCodeFor(
        error,
        argv.includes('--verbose'),
        (text) => io.stderr.write(text),
        paragraphColumns(io.stderr),
      );
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
