import { EXIT_CODES } from '../errors.js';
import { DEFAULT_COLUMNS, fitItem, fitLines } from '../report/width.js';

// Help text shown after commander's own: one example block per command, and for the top level the exit codes and
// the environment it reads. Plain data, laid out at the width the help is printed at, so that --help loads nothing
// more and fits the terminal (issue 39).

/** An example: the command line, and why (or nothing). A command line stays whole at 80 columns: a test checks it. */
type Example = readonly [command: string, why: string];

/**
 * A command's examples at `columns`: `$ command  # why` in two aligned columns where every line fits, else each
 * command on its line with its why on the line below (mixing the two read worse than either).
 */
function examplesText(examples: readonly Example[], columns: number): string {
  const width = Math.max(...examples.map(([command]) => command.length));
  const aligned = examples.map(([command, why]) => (why ? `  $ ${command.padEnd(width)}  # ${why}` : `  $ ${command}`));
  const stacked = examples.flatMap(([command, why]) => [`  $ ${command}`, ...(why ? [`      # ${why}`] : [])]);
  const shown = aligned.every((line) => line.length <= columns) ? aligned : stacked;
  return `\nExamples:\n${fitLines(shown.join('\n'), columns)}\n`;
}

export const COMMAND_EXAMPLES = {
  run: [
    ['cuda-pipe run', 'the built-in configs/balanced.yaml'],
    ['cuda-pipe run configs/copy-bound.yaml --streams 8 --chunks 32', 'override the layout'],
    ['cuda-pipe run my.yaml --dry-run', 'print the plan; no GPU needed'],
    ['cuda-pipe run my.yaml --json result.json --md report.md', 'save the result and a report'],
    ['cuda-pipe run --timeline --html report.html', 'see the streams overlap: a Gantt chart and a report page'],
    [
      'srun --ntasks-per-node=4 cuda-pipe run --json results/%r.json',
      'one rank per GPU, a Result per rank (%r: the rank)',
    ],
  ],
  merge: [
    [
      'cuda-pipe merge results/*.json',
      "each rank's figures per host and GPU, the total, the slowest GPU, collectives' skew",
    ],
    [
      'cuda-pipe merge results/*.json --json all.json',
      "one file of every rank's Result, for report, compare and timeline",
    ],
  ],
  sweep: [
    ['cuda-pipe sweep', 'balanced: 1 to 8 streams × 1 to 64 chunks'],
    ['cuda-pipe sweep my.yaml --streams 2,4 --chunks 8,16,32', 'these layouts, in every issue order'],
    ['cuda-pipe sweep my.yaml --order depth-first,breadth-first', "both orders (default: the config's)"],
    ['cuda-pipe sweep my.yaml --dry-run', 'preview the layouts and the time budget; no GPU needed'],
    ['cuda-pipe sweep my.yaml --set kernels[0].args[3].int32=530,1060', 'any scalar can be an axis'],
    ['cuda-pipe sweep configs/ddp.yaml --devices all', 'data-parallel on every GPU: the best bucket count'],
  ],
  probe: [
    ['cuda-pipe probe', 'copy engines, PCIe link, versions of every device'],
    ['cuda-pipe probe --device 0 --bandwidth --size 1GiB', 'measure copy bandwidth'],
    ['cuda-pipe probe --device 0,1', 'two devices and the peer matrix between them'],
    ['cuda-pipe probe --json - | jq .devices', 'the probe as JSON on stdout (tables on stderr)'],
  ],
  kernels: [
    ['cuda-pipe kernels', 'the built-in kernels, their signatures'],
    ['cuda-pipe kernels --check', 'compile them with NVRTC; no GPU needed'],
    ['cuda-pipe kernels --check my_kernel.cu --arch sm_90', 'check your own source'],
  ],
  schema: [
    ['cuda-pipe schema > cuda-pipe.schema.json', "for editors' YAML completion (at a terminal: an outline)"],
    ['cuda-pipe schema --result > result.schema.json', 'the JSON Schema of result files'],
    ['cuda-pipe schema --analysis > analysis.schema.json', 'the JSON Schema of `analyze --json` documents'],
  ],
  report: [
    ['cuda-pipe report result.json', 'the table, as measured'],
    ['cuda-pipe report result.json --md report.md', 'a Markdown report; --md - prints it'],
    ['cuda-pipe report old-v1.json --json new.json', 'rewrite a saved file as the current Result version'],
    ['cuda-pipe report ab.json --md -', 'an A/B document (ab --json) as Markdown'],
    ['cuda-pipe report ab.json --junit ab.xml --bmf ab.bmf.json', "ab's verdicts for CI: JUnit XML, Bencher"],
  ],
  compare: [
    ['cuda-pipe compare baseline.json candidate.json', 'exit 1 when anything is slower'],
    ['cuda-pipe compare base.json new.json --threshold 2 --md diff.md', ''],
    ['cuda-pipe compare base.json new.json --junit compare.xml', 'a test case per gated mode, for CI'],
  ],
  ab: [
    ['cuda-pipe ab base/kernel.yaml head/kernel.yaml', 'the kernel before and after a change; exit 1 when slower'],
    ['cuda-pipe ab my.yaml my-8-streams.yaml --max-time 30 --md ab.md', 'two layouts, more time for a close call'],
    ['cuda-pipe ab base/k.yaml head/k.yaml --junit ab.xml --csv ab.csv', 'the verdicts for CI and a spreadsheet'],
  ],
  timeline: [
    ['cuda-pipe timeline result.json', 'the Gantt chart of each traced rep, fitted to the terminal'],
    ['cuda-pipe timeline result.json --html report.html --trace trace.json', 'a report page, and a trace for Perfetto'],
  ],
  overhead: [['cuda-pipe overhead --ops 50000', 'host cost of one launch and one copy']],
  analyze: [
    ['cuda-pipe analyze trace.pt.trace.json.gz', 'per step: overlap, exposed and idle time, floor, findings'],
    [
      'cuda-pipe analyze rank0.json.gz rank1.json.gz --json analysis.json',
      "one trace per rank: each collective's skew",
    ],
    ['cuda-pipe analyze trace.json --rates probe.json', 'the floor from measured link rates (probe --bandwidth)'],
    ['cuda-pipe analyze --ab before.json after.json', 'B against A: each step a sample; exit 1 when slower'],
    ['cuda-pipe analyze --ab a0.json a1.json -- b0.json b1.json', 'B against A, a launch a side, rank with rank'],
    [
      'cuda-pipe analyze trace.json --md a.md --html a.html --trace a.json',
      'a report, a page, the events for Perfetto',
    ],
    ['cuda-pipe analyze report.sqlite', 'an Nsight Systems export (nsys export --type sqlite)'],
  ],
} as const satisfies Record<string, readonly Example[]>;

export type CommandName = keyof typeof COMMAND_EXAMPLES;

/** What follows a command's own text. */
const AFTER: Partial<Record<CommandName, string>> = {
  analyze: "Validated on one host's traces (two H100s); no real nsys export was tried.",
};

/** The help text after a command's options, at `columns`: its examples, and a line of its own where it has one. */
export function commandHelp(command: CommandName, columns = DEFAULT_COLUMNS): string {
  const after = AFTER[command];
  return examplesText(COMMAND_EXAMPLES[command], columns) + (after ? `\n${fitLines(after, columns)}\n` : '');
}

/** Environment variables and what each is for; names that go together share an entry. */
export type EnvironmentList = ReadonlyArray<readonly [string, string]>;

/**
 * Every environment variable cuda-pipe reads, by what it is for (a test finds each one read in src/ here), with
 * `kinds` (kinds/index.ts' KIND_ENVIRONMENT: each stage kind's libraries) in their place. The kinds are a parameter
 * because loading them loads zod and every kind's schema, which took longer than the rest of `--help`: program.ts
 * loads them only where the top-level help may be printed.
 */
export const environmentList = (kinds: EnvironmentList): EnvironmentList => [
  ['CUDA_PIPE_CUDART', 'the libcudart file to load, exactly (nothing else is tried)'],
  ['CUDA_PIPE_NVRTC', 'the libnvrtc file to load, exactly (nothing else is tried)'],
  ['CUDA_PIPE_CUPTI', 'the libcupti file, exactly: engine times of traced reps (else events)'],
  // Each stage kind's own libraries (src/kinds/<kind>/: cuBLAS, cuBLASLt, NCCL).
  ...kinds,
  ['CUDA_PATH, CUDA_HOME', "CUDA toolkit roots searched (lib64/, lib/) before the loader's path"],
  ['LD_LIBRARY_PATH', 'folders searched for the CUDA libraries, as the loader does'],
  ['VIRTUAL_ENV, CONDA_PREFIX, HOME', "where PyTorch's libnccl.so.2 is looked for (lib/, ~/.local/lib)"],
  ['CUDA_PIPE_CACHE_DIR', 'compiled-kernel cache (default $XDG_CACHE_HOME/cuda-pipe/cubin)'],
  ['XDG_CACHE_HOME', 'the cache root without CUDA_PIPE_CACHE_DIR (default ~/.cache)'],
  ['NO_COLOR', 'set to anything: no colour in tables'],
  ['COLUMNS', "the width output fits (default: the terminal's, else 100)"],
  ['CUDA_VISIBLE_DEVICES', 'a launched rank shown one GPU takes device 0, not its local rank'],
  [
    'CUDA_DEVICE_MAX_CONNECTIONS',
    "CUDA's hardware work queues for the streams (8 unset); pipeline.connections sets it for a run",
  ],
  [
    'OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_LOCAL_RANK, OMPI_COMM_WORLD_SIZE, OMPI_MCA_ess_base_jobid, ' +
      'SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS, SLURM_JOB_ID, MV2_COMM_WORLD_RANK, MV2_COMM_WORLD_LOCAL_RANK, ' +
      'MV2_COMM_WORLD_SIZE, PMI_RANK, MPI_LOCALRANKID, PMI_SIZE, RANK, LOCAL_RANK, WORLD_SIZE, TORCHELASTIC_RUN_ID',
    'rank, local rank (its GPU), size and job: OpenMPI, Slurm, MVAPICH, MPICH/PMI, torchrun',
  ],
  ['CUDA_PIPE_JOB_ID', "names the ranks' NCCL id file where the launcher gives no job id"],
  ['PMIX_NAMESPACE, SLURM_STEP_ID', "the job id under OpenMPI 5, and the Slurm step, in that file's name"],
  ['NCCL_NVLS_ENABLE', 'left as set; unset, cuda-pipe sets 0 (no NVLink multicast)'],
  ['NCCL_RUNTIME_CONNECT', 'left as set; unset, cuda-pipe sets 0 (connect at init, not in a rep)'],
];

/** The exit codes and the environment, each a term and its meaning beside it, or below it where too narrow. */
export function topLevelHelp(kinds: EnvironmentList, columns = DEFAULT_COLUMNS): string {
  const codes = EXIT_CODES.map(([code, meaning]) =>
    fitItem(String(code).padStart(3), meaning, columns, { termWidth: 3 }),
  );
  // Names up to 22 columns share the line with their meaning; a longer list goes on lines of its own, the meaning
  // below.
  const listed = (names: string, meaning: string) =>
    `${fitLines(`  ${names}`, columns)}\n${fitLines(`      ${meaning}`, columns)}`;
  const environment = environmentList(kinds).map(([names, meaning]) =>
    names.length <= 22 ? fitItem(names, meaning, columns, { termWidth: 22 }) : listed(names, meaning),
  );
  const more = fitLines("Run `cuda-pipe <command> --help` for a command's options and examples.", columns);
  return `\nExit codes:\n${codes.join('\n')}\n\nEnvironment:\n${environment.join('\n')}\n\n${more}\n`;
}
