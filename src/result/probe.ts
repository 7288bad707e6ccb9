import { z } from 'zod';
import { DeviceFactsSchema, SoftwareVersionsSchema } from './environment.js';
import { StatsSchema } from '../model/mode.js';

// What `cuda-pipe probe --json` writes: each device's facts and, with --bandwidth, its copy rates; with two devices
// or more, what the driver says of each pair.

export const PROBE_SCHEMA_ID = 'cuda-pipe/probe';
export const PROBE_VERSION = 1;

export const BandwidthSchema = z.object({
  bytes: z.number(),
  hostMemory: z.enum(['pinned', 'pageable']),
  direction: z.enum(['h2d', 'd2h', 'bidirectional']),
  /** For bidirectional: the copies each direction was split into, and the streams per direction. */
  pieces: z.number().int(),
  streamsPerDirection: z.number().int(),
  samplesMs: z.array(z.number()),
  stats: StatsSchema,
  /** bytes moved (both directions together for bidirectional) / median time, in GB/s (1e9 bytes/s). */
  gbPerSecond: z.number(),
});
export type Bandwidth = z.infer<typeof BandwidthSchema>;

/** What the driver says of one ordered pair of devices (cudaDeviceCanAccessPeer, cudaDeviceGetP2PAttribute). */
export const PeerLinkSchema = z.object({
  from: z.number().int(),
  to: z.number().int(),
  /** `from` can map `to`'s memory: with peer access enabled, copies go device to device (NVLink or PCIe). */
  canAccess: z.boolean(),
  /** The driver's rank of the path, lower is faster; 0 where there is no peer access. */
  performanceRank: z.number().int(),
  nativeAtomics: z.boolean(),
});
export type PeerLink = z.infer<typeof PeerLinkSchema>;

/** One timed copy between two devices (cudaMemcpyPeerAsync). */
export const PeerBandwidthSchema = z.object({
  from: z.number().int(),
  to: z.number().int(),
  /** Bytes per copy; a bidirectional row copies this many each way. */
  bytes: z.number(),
  /**
   * 'peer': peer access was enabled and the copy went device to device; 'staged': the driver staged it through the
   * host.
   */
  path: z.enum(['peer', 'staged']),
  samplesMs: z.array(z.number()),
  stats: StatsSchema,
  /** bytes moved (both directions together for bidirectional) / median time, in GB/s (1e9 bytes/s). */
  gbPerSecond: z.number(),
  /** `from` → `to` and `to` → `from` at once. */
  bidirectional: z.boolean(),
});
export type PeerBandwidth = z.infer<typeof PeerBandwidthSchema>;

export const PeersSchema = z.object({
  /** Every ordered pair of the probed devices, the diagonal left out. */
  matrix: z.array(PeerLinkSchema),
  /** null when copies between devices were not measured. */
  bandwidth: z.array(PeerBandwidthSchema).nullable(),
});
export type Peers = z.infer<typeof PeersSchema>;

export const ProbeDocumentSchema = z.object({
  schema: z.literal(PROBE_SCHEMA_ID),
  version: z.literal(PROBE_VERSION),
  tool: z.object({ name: z.string(), version: z.string() }),
  software: SoftwareVersionsSchema,
  devices: z.array(z.object({ facts: DeviceFactsSchema, bandwidth: z.array(BandwidthSchema).nullable() })),
  /** Only when the probe covered two devices or more; optional within version 1, so earlier probe files still load. */
  peers: PeersSchema.optional(),
});
export type ProbeDocument = z.infer<typeof ProbeDocumentSchema>;
