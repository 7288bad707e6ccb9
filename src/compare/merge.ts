import { aboveBound } from '../measure/warnings.js';
import { median } from '../quantile.js';
import type { RunResult } from '../result/schema.js';
import { collectiveSkew, type Skew } from './skew.js';

// `cuda-pipe merge`: the Results of the ranks of one launch (mpirun, srun), one per GPU, read side by side. Pure: it
// reads Results and returns figures; report/merge.ts draws them.

/** One rank's headline figures: its GPU, and the overlapped mode `run` puts first. */
export interface RankFigures {
  readonly result: RunResult;
  readonly host: string;
  readonly rank: number | null;
  readonly device: { readonly index: number; readonly name: string };
  readonly overlappedMs: number;
  readonly speedup: number;
  readonly efficiency: number;
  /** Bytes the headline mode moves per rep, both directions. */
  readonly bytes: number;
  /** bytes / overlappedMs, in GB/s (1e9 bytes per second). */
  readonly gbps: number;
}

export interface HostTotal {
  readonly host: string;
  readonly ranks: readonly RankFigures[];
  readonly gbps: number;
}

/** The ranks that ran one config (the same workload, whichever device each rank had). */
export interface MergedConfig {
  readonly config: string;
  readonly hosts: readonly HostTotal[];
  /** Every rank, by host, then device index, then rank. */
  readonly ranks: readonly RankFigures[];
  /** Sum of every rank's throughput: bytes moved per second across the ranks. */
  readonly totalGbps: number;
  readonly fastest: RankFigures;
  /** totalGbps over the fastest single GPU's: N for N GPUs as fast as the fastest. */
  readonly scaling: number;
  /**
   * GPUs (host and device) found in more than one Result. Where any is, the total and the scaling count one GPU
   * twice, so the report gives neither as a headline.
   */
  readonly sharedGpus: readonly string[];
  /** The median of the ranks' overlapped medians. */
  readonly medianMs: number;
  /**
   * The rank with the slowest overlapped median, and how far it trails `medianMs` (0.05 = 5% slower); null for one
   * rank.
   */
  readonly slowest: { readonly figures: RankFigures; readonly trails: number } | null;
  readonly notes: readonly string[];
  /**
   * When each rank reached each collective of its traced reps; null where the config has no collectives or one rank
   * ran.
   */
  readonly skew: Skew | null;
  /** Where the ranks meet at collectives every step: what the step took and what the ranks bought; null otherwise. */
  readonly step: StepFigures | null;
}

/**
 * A config whose ranks meet at collectives every step (data parallelism): its copies move a few bytes, so its rate
 * says nothing, while its step is as slow as its slowest rank (every rank waits for it at each collective).
 */
export interface StepFigures {
  /** The slowest rank's overlapped median: the step's time. */
  readonly slowestMs: number;
  /**
   * One GPU's compute alone a step (its kernels alone, fastest reps), the median over the ranks; null where not
   * measured.
   */
  readonly computeMs: number | null;
  /** ranks × computeMs / slowestMs: the ranks' work a step against one GPU computing alone; null without computeMs. */
  readonly scaling: number | null;
}

export interface Merged {
  readonly configs: readonly MergedConfig[];
  /** Every Result, in the order of the tables: what `merge --json` writes, an array `report` and `compare` read. */
  readonly results: readonly RunResult[];
}

export function rankFigures(result: RunResult): RankFigures {
  const headline = result.modes.find((m) => m.id === result.summary.mode);
  const overlappedMs = headline?.stats.median ?? result.summary.overlappedMs;
  const bytes = headline ? headline.bytes.h2d + headline.bytes.d2h : 0;
  const deviceIndex = headline?.device ?? result.devices[0]?.index ?? 0;
  const device = result.devices.find((d) => d.index === deviceIndex) ?? result.devices[0];
  return {
    result,
    host: result.run.hostname,
    rank: result.run.rank,
    device: { index: deviceIndex, name: device?.name ?? 'unknown' },
    overlappedMs,
    speedup: headline?.analysis?.speedup ?? result.summary.speedup,
    efficiency: headline?.analysis?.efficiency ?? result.summary.efficiency,
    bytes,
    gbps: overlappedMs > 0 ? bytes / overlappedMs / 1e6 : 0,
  };
}

/**
 * Ranks run the same config on different devices, and the device is part of the config hash; so a config is known
 * by its name and its resolved fields without `device`.
 */
function workloadKey(result: RunResult): string {
  const resolved = result.config.resolved;
  const rest =
    typeof resolved === 'object' && resolved !== null
      ? { ...(resolved as Record<string, unknown>), device: undefined }
      : resolved;
  return `${result.config.name}\u0000${JSON.stringify(rest)}`;
}

const byPlace = (a: RankFigures, b: RankFigures) =>
  a.host.localeCompare(b.host) || a.device.index - b.device.index || (a.rank ?? -1) - (b.rank ?? -1);

export function mergeResults(results: readonly RunResult[]): Merged {
  const groups = new Map<string, RankFigures[]>();
  for (const result of results) {
    const key = workloadKey(result);
    groups.set(key, [...(groups.get(key) ?? []), rankFigures(result)]);
  }
  const configs = [...groups.values()].map((members) => mergeConfig([...members].sort(byPlace)));
  return { configs, results: configs.flatMap((c) => c.ranks.map((r) => r.result)) };
}

function mergeConfig(ranks: readonly RankFigures[]): MergedConfig {
  const first = ranks[0] as RankFigures;
  const hosts = [...new Set(ranks.map((r) => r.host))].map((host) => {
    const mine = ranks.filter((r) => r.host === host);
    return { host, ranks: mine, gbps: mine.reduce((sum, r) => sum + r.gbps, 0) };
  });
  const totalGbps = ranks.reduce((sum, r) => sum + r.gbps, 0);
  const fastest = ranks.reduce((best, r) => (r.gbps > best.gbps ? r : best), first);
  const medianMs = median(ranks.map((r) => r.overlappedMs));
  const slowestRank = ranks.reduce((worst, r) => (r.overlappedMs > worst.overlappedMs ? r : worst), first);
  const step = stepFigures(ranks, slowestRank);
  return {
    config: first.result.config.name,
    hosts,
    ranks,
    totalGbps,
    fastest,
    scaling: fastest.gbps > 0 ? totalGbps / fastest.gbps : 0,
    sharedGpus: sharedGpus(ranks),
    medianMs,
    slowest: ranks.length > 1 ? { figures: slowestRank, trails: slowestRank.overlappedMs / medianMs - 1 } : null,
    notes: mergeNotes(ranks, step !== null),
    skew: collectiveSkew(ranks),
    step,
  };
}

/** The step of ranks that meet at collectives (every headline mode moves collective bytes); null for others. */
function stepFigures(ranks: readonly RankFigures[], slowest: RankFigures): StepFigures | null {
  const headlines = ranks.map((r) => r.result.modes.find((m) => m.id === r.result.summary.mode));
  if (!headlines.every((m) => (m?.bytes.collective ?? 0) > 0)) return null;
  const computes = ranks.flatMap((r, i) => {
    const kernels = r.result.modes.filter(
      (m) =>
        m.device === headlines[i]?.device && m.role.kind === 'stage' && m.role.stage === 'kernel' && m.samplesMs.length,
    );
    return kernels.length ? [kernels.reduce((sum, m) => sum + m.samplesMs.reduce((a, b) => Math.min(a, b)), 0)] : [];
  });
  const computeMs = computes.length === ranks.length ? median(computes) : null;
  return {
    slowestMs: slowest.overlappedMs,
    computeMs,
    scaling: computeMs === null ? null : (ranks.length * computeMs) / slowest.overlappedMs,
  };
}

const placeOf = (r: RankFigures) => `${r.host} device ${r.device.index}`;

function placeCounts(ranks: readonly RankFigures[]): Map<string, number> {
  const seen = new Map<string, number>();
  for (const r of ranks) seen.set(placeOf(r), (seen.get(placeOf(r)) ?? 0) + 1);
  return seen;
}

function sharedGpus(ranks: readonly RankFigures[]): string[] {
  return [...placeCounts(ranks)].filter(([, count]) => count > 1).map(([place]) => place);
}

/**
 * What makes the merged figures doubtful: the same GPU twice, ranks missing, GPUs of one host not timed together,
 * ranks of different jobs, and an efficiency above the model's bound, which `run` reports as a defect of the model.
 */
function mergeNotes(ranks: readonly RankFigures[], inStep: boolean): string[] {
  const notes: string[] = [];
  for (const [place, count] of placeCounts(ranks)) {
    if (count > 1)
      notes.push(
        `${place} appears in ${count} results: ranks that shared a GPU, or files of different runs; their sum overstates one GPU.`,
      );
  }
  for (const r of ranks) {
    // What a rank above its bound means depends on its clocks: `run`'s own warning says which.
    const headline = r.result.modes.find((m) => m.id === r.result.summary.mode);
    const above = headline ? aboveBound(headline) : null;
    const message = above ? `${above.message.charAt(0).toLowerCase()}${above.message.slice(1)}` : '';
    if (above) notes.push(`${placeOf(r)}${r.rank === null ? '' : ` (rank ${r.rank})`}: ${message} ${above.remedy}`);
  }
  notes.push(...rankNotes(ranks));
  const gpusOf = new Map<string, Set<number>>();
  for (const r of ranks) gpusOf.set(r.host, (gpusOf.get(r.host) ?? new Set()).add(r.device.index));
  const shared = [...gpusOf].filter(([, gpus]) => gpus.size > 1).map(([host]) => host);
  // Ranks that meet at collectives are given no total, so nothing to say of one; their collectives keep them in step.
  if (shared.length && !inStep) {
    notes.push(
      `Ranks that share a host (${shared.join(', ')}) measured in their own processes, not in step: a host's total adds the rate each GPU reached, ` +
        "which they reach at once only if the host's memory system keeps up. `cuda-pipe run --devices all` times its GPUs together from one start and measures that.",
    );
  }
  const jobs = [...new Set(ranks.map((r) => r.result.run.jobId ?? 'none'))];
  if (jobs.length > 1) notes.push(`The results come from ${jobs.length} jobs (${jobs.join(', ')}), not one launch.`);
  return notes;
}

/**
 * Each rank given once and every rank of the launch given: a rank twice, or one missing, is named (distinct ranks
 * counted).
 */
function rankNotes(ranks: readonly RankFigures[]): string[] {
  const notes: string[] = [];
  const given = new Map<number, number>();
  for (const r of ranks) if (r.rank !== null) given.set(r.rank, (given.get(r.rank) ?? 0) + 1);
  for (const [rank, count] of [...given].sort(([a], [b]) => a - b)) {
    if (count > 1)
      notes.push(
        `rank ${rank} is in ${count} results: one file given twice, or files of different runs; give each rank once.`,
      );
  }
  const sizes = [...new Set(ranks.flatMap((r) => (r.result.run.size === null ? [] : [r.result.run.size])))];
  const size = sizes.length === 1 ? (sizes[0] as number) : null;
  if (size === null || size <= given.size) return notes;
  const missing: number[] = [];
  for (let rank = 0; rank < size && missing.length <= 8; rank++) if (!given.has(rank)) missing.push(rank);
  const named = missing.length > 8 ? `${missing.slice(0, 8).join(', ')}, …` : missing.join(', ');
  notes.push(
    `${given.size} of the launch's ${size} ranks ${given.size === 1 ? 'is' : 'are'} here; missing: rank${size - given.size === 1 ? '' : 's'} ${named}.`,
  );
  return notes;
}
