import { EXIT_CODES } from '../errors.js';
import { KIND_ENVIRONMENT } from '../kinds/index.js';

// Help text shown after commander's own: one example block per command, and for the top level the exit codes and
// the environment it reads. Plain strings, so that --help loads nothing more.

function examples(...lines: Array<[string, string]>): string {
  const width = Math.max(...lines.map(([command]) => command.length));
  const shown = lines.map(([command, why]) => (why ? `  $ ${command.padEnd(width)}  # ${why}` : `  $ ${command}`));
  return `\nExamples:\n${shown.join('\n')}\n`;
}

export const COMMAND_HELP = {
  run: examples(
    ['cuda-pipe run', 'the built-in configs/balanced.yaml'],
    ['cuda-pipe run configs/copy-bound.yaml --streams 8 --chunks 32', 'override the layout'],
    ['cuda-pipe run my.yaml --dry-run', 'print the plan; no GPU needed'],
    ['cuda-pipe run my.yaml --json result.json --md report.md', 'save the result and a report'],
    ['cuda-pipe run --timeline --html report.html', 'see the streams overlap: a Gantt chart and a report page'],
    ['srun --ntasks-per-node=4 cuda-pipe run --json results/%r.json', 'one rank per GPU, a Result per rank (%r: the rank)'],
  ),
  merge: examples(
    ['cuda-pipe merge results/*.json', "each rank's figures per host and GPU, the total, the slowest GPU, collectives' skew"],
    ['cuda-pipe merge results/*.json --json all.json', "one file of every rank's Result, for report, compare and timeline"],
  ),
  sweep: examples(
    ['cuda-pipe sweep', 'balanced: 1 to 8 streams × 1 to 64 chunks'],
    ['cuda-pipe sweep my.yaml --streams 2,4 --chunks 8,16,32 --order depth-first,breadth-first', ''],
    ['cuda-pipe sweep my.yaml --dry-run', 'preview the layouts and the time budget; no GPU needed'],
    ['cuda-pipe sweep my.yaml --set kernels[0].args[3].int32=530,1060 --html sweep.html', 'any scalar can be an axis'],
    ['cuda-pipe sweep configs/ddp.yaml --devices all', 'data-parallel on every GPU: the best bucket count'],
  ),
  probe: examples(
    ['cuda-pipe probe', 'copy engines, PCIe link, versions of every device'],
    ['cuda-pipe probe --device 0 --bandwidth --size 1GiB', 'measure copy bandwidth'],
    ['cuda-pipe probe --device 0,1', 'two devices and the peer matrix between them'],
    ['cuda-pipe probe --json - | jq .devices', 'the probe as JSON on stdout (tables on stderr)'],
  ),
  kernels: examples(
    ['cuda-pipe kernels', 'list the built-in kernels and their signatures'],
    ['cuda-pipe kernels --check', 'compile them all with NVRTC; no GPU needed'],
    ['cuda-pipe kernels --check my_kernel.cu --arch sm_90', 'check your own source'],
  ),
  schema: examples(
    ['cuda-pipe schema > cuda-pipe.schema.json', "for editors' YAML completion"],
    ['cuda-pipe schema --result', 'the JSON Schema of result files'],
    ['cuda-pipe schema --analysis', 'the JSON Schema of `analyze --json` documents'],
  ),
  report: examples(
    ['cuda-pipe report result.json', 'the table, as measured'],
    ['cuda-pipe report result.json --md report.md', 'a Markdown report; --md - prints it'],
    ['cuda-pipe report old-v1.json --json new.json', 'rewrite a saved file as the current Result version'],
    ['cuda-pipe report ab.json --md -', 'an A/B document (ab --json) as Markdown; a probe --json file as its tables'],
  ),
  compare: examples(['cuda-pipe compare baseline.json candidate.json', 'exit 1 when anything is slower'], ['cuda-pipe compare base.json new.json --threshold 2 --md diff.md', '']),
  ab: examples(
    ['cuda-pipe ab base/kernel.yaml head/kernel.yaml', 'the kernel before and after a change, interleaved; exit 1 when slower'],
    ['cuda-pipe ab my.yaml my-8-streams.yaml --max-time 30 --md ab.md', 'two layouts, with more time for a close call'],
  ),
  timeline: examples(
    ['cuda-pipe timeline result.json', 'the Gantt chart of each traced rep, fitted to the terminal'],
    ['cuda-pipe timeline result.json --html report.html --trace trace.json', 'a report page, and a trace for Perfetto'],
  ),
  overhead: examples(['cuda-pipe overhead --ops 50000', 'host cost of one launch and one copy']),
  analyze:
    examples(
      ['cuda-pipe analyze trace.pt.trace.json.gz', 'per step: overlap, exposed and idle time, floor, findings'],
      ['cuda-pipe analyze rank0.json.gz rank1.json.gz --json analysis.json', "one trace per rank: each collective's skew, the document"],
      ['cuda-pipe analyze trace.json --rates probe.json', 'the floor from measured link rates (probe --bandwidth --json)'],
      ['cuda-pipe analyze --ab a0.json a1.json -- b0.json b1.json', 'B against A, a launch a side, rank with rank'],
      ['cuda-pipe analyze trace.json --md a.md --html a.html --trace a.json', 'a report, a page, the analysed events for Perfetto'],
      ['cuda-pipe analyze report.sqlite', 'an Nsight Systems export (nsys export --type sqlite report.nsys-rep)'],
    ) + "\nValidated on one host's traces (two H100s); no real nsys export was tried.\n",
} as const satisfies Record<string, string>;

/**
 * Every environment variable cuda-pipe reads, by what it is for (a test finds each one read in src/ here). Names
 * that go together share an entry.
 */
export const ENVIRONMENT: ReadonlyArray<readonly [string, string]> = [
  ['CUDA_PIPE_CUDART', 'the libcudart file to load, exactly (nothing else is tried)'],
  ['CUDA_PIPE_NVRTC', 'the libnvrtc file to load, exactly (nothing else is tried)'],
  ['CUDA_PIPE_CUPTI', 'the libcupti file, exactly: engine times of traced reps (else events)'],
  // Each stage kind's own libraries (src/kinds/<kind>/: cuBLAS, cuBLASLt, NCCL).
  ...KIND_ENVIRONMENT,
  ['CUDA_PATH, CUDA_HOME', "CUDA toolkit roots searched (lib64/, lib/) before the loader's path"],
  ['LD_LIBRARY_PATH', 'folders searched for the CUDA libraries, as the loader does'],
  ['VIRTUAL_ENV, CONDA_PREFIX, HOME', "where PyTorch's libnccl.so.2 is looked for (lib/, ~/.local/lib)"],
  ['CUDA_PIPE_CACHE_DIR', 'compiled-kernel cache (default $XDG_CACHE_HOME/cuda-pipe/cubin)'],
  ['XDG_CACHE_HOME', 'the cache root without CUDA_PIPE_CACHE_DIR (default ~/.cache)'],
  ['NO_COLOR', 'set to anything: no colour in tables'],
  ['COLUMNS', "the width output fits (default: the terminal's, else 100)"],
  ['CUDA_VISIBLE_DEVICES', 'a launched rank shown one GPU takes device 0, not its local rank'],
  ['CUDA_DEVICE_MAX_CONNECTIONS', "CUDA's hardware work queues for the streams (8 unset); pipeline.connections sets it for a run"],
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

/** Names up to 22 columns share the line with their meaning; a longer list wraps, its meaning on a line below. */
function environmentLines(): string {
  return ENVIRONMENT.flatMap(([names, meaning]) => {
    if (names.length <= 22) return [`  ${names.padEnd(22)}${meaning}`];
    const lines: string[] = [];
    for (const name of names.split(', ')) {
      const last = lines.length - 1;
      if (last >= 0 && (lines[last] as string).length + name.length + 2 <= 98) lines[last] += `, ${name}`;
      else lines.push(`  ${name}`);
    }
    return [...lines, `      ${meaning}`];
  }).join('\n');
}

export function topLevelHelp(): string {
  const codes = EXIT_CODES.map(([code, meaning]) => `  ${String(code).padStart(3)}  ${meaning}`).join('\n');
  const environment = environmentLines();
  return `\nExit codes:\n${codes}\n\nEnvironment:\n${environment}\n\nRun \`cuda-pipe <command> --help\` for a command's options and examples.\n`;
}
