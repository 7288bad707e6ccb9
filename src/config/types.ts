import type {
  HostMemoryKind,
  HostThread,
  IssueMode,
  IssueOrder,
  PlacedDefaultOp,
  ScalarType,
  StreamKind,
  Topology,
} from '../vocabulary.js';
import type { ComputeStep, ConfigSections } from '../kinds/index.js';
import type { ConfigBuffer, ConfigHost, InitSpec } from '../model/buffers.js';
import type { Handoff } from './devices.js';
import type { ParsedConfig } from './schema.js';
import type { LatencySpec, PrioritySpec } from './toolbox.js';

export type { ConfigBuffer, ConfigHost, InitSpec };

// The validated config every layer reads, apart from the YAML loader (load.ts) that makes it: the planner, the
// executor and the reports import these types without the loader's parser and file reading.

export interface Tolerance {
  readonly relative: number;
  readonly absolute: number;
}

export type ConfigArg =
  | { readonly kind: 'buffer'; readonly buffer: string }
  | { readonly kind: 'chunk-elements' }
  | { readonly kind: 'chunk-items' }
  | { readonly kind: 'chunk-offset' }
  | { readonly kind: 'scalar'; readonly type: ScalarType; readonly value: number | bigint };

export interface ConfigKernel {
  readonly label: string;
  readonly source: string;
  readonly entry: string;
  readonly options: readonly string[];
  readonly block: number;
  readonly grid: 'auto' | 'cover' | number;
  readonly args: readonly ConfigArg[];
}

/** The kinds' own sections (the host stage's `host`) are read by their kinds, under their keys. */
export interface Config extends ConfigSections {
  readonly name: string;
  readonly description: string | null;
  /** The YAML file, or null for a config built in code. */
  readonly path: string | null;
  /** The device of the single-device modes: `device`, or the first of `devices`. */
  readonly device: number;
  /** Several devices in one run (`all` until counted), or null for one. */
  readonly devices: readonly number[] | 'all' | null;
  readonly buffers: readonly ConfigBuffer[];
  /** The kernels NVRTC compiles (the `kernels:` entries that are kernels), in the config's order. */
  readonly kernels: readonly ConfigKernel[];
  /**
   * Every `kernels:` entry in the config's order, as its stage kind resolved it: a kernel by its label, a library
   * stage (gemm) with its spec. Absent in a config built in code from kernels alone.
   */
  readonly steps?: readonly ComputeStep[];
  readonly pipeline: ConfigPipeline;
  readonly repetitions: ParsedConfig['repetitions'];
  /** What `sweep` measures, as the config says; null when it has no sweep section. */
  readonly sweep: NonNullable<ParsedConfig['sweep']> | null;
  /**
   * What chunks are ranges of: the items per rep where `pipeline.items` is given, else the element count every
   * chunked buffer shares (each buffer's itemSize then 1). A chunked buffer holds elements × its itemSize elements.
   */
  readonly elements: number;
  /** `pipeline.items` as given, or null where chunks range over elements. */
  readonly items: number | null;
  /** verify.tolerance: outputs compared as numbers within it; null: byte for byte. */
  readonly tolerance: Tolerance | null;
  /** A latency-critical stream beside the pipeline, or null. */
  readonly latency: LatencySpec | null;
  /** Device memory the buffers may use, bytes; null for no budget (every buffer whole on the device). */
  readonly deviceMemory: number | null;
  /** What the user should know about how the config was read (deprecated spellings). */
  readonly notes: readonly string[];
}

export interface ConfigPipeline {
  readonly chunks: number;
  readonly streams: number;
  readonly streamKind: StreamKind;
  readonly topology: Topology;
  readonly mode: IssueMode;
  readonly slots: number | null;
  /** Each variant of the layout with one op on a default stream (`legacyDefaultOp` is one on the legacy stream). */
  readonly defaultStreamOps: readonly PlacedDefaultOp[];
  /** Priority of the pipeline's streams, or null for the device's default. */
  readonly priority: PrioritySpec | null;
  /** CUDA_DEVICE_MAX_CONNECTIONS for the process, or null to leave the environment's (else CUDA's 8). */
  readonly connections: number | null;
  readonly align: number;
  readonly orders: readonly IssueOrder[];
  /** One pipeline across two devices, or null. */
  readonly handoff: Handoff | null;
}

export interface Overrides {
  streams?: number | undefined;
  chunks?: number | undefined;
  /** host.workers: the host stage's worker threads. */
  workers?: number | undefined;
  order?: IssueOrder | undefined;
  mode?: IssueMode | undefined;
  hostMemory?: HostMemoryKind | undefined;
  device?: number | undefined;
  devices?: number[] | 'all' | undefined;
  reps?: number | undefined;
  warmup?: number | undefined;
  warmupTime?: number | undefined;
  minReps?: number | undefined;
  maxNoise?: number | undefined;
  maxTime?: number | undefined;
}

/** Names a place in the config file ("balanced.yaml:12:7"), for messages about a field path. */
export type Locator = (path: readonly (string | number)[]) => string;

export interface LoadedConfig {
  readonly config: Config;
  readonly locate: Locator;
  /** The YAML as the user wrote it, with flag overrides applied, for the Result. */
  readonly raw: unknown;
}

export type { HostThread };
