import { z } from 'zod';
import { DeviceFactsSchema, SoftwareVersionsSchema, StatsSchema } from './schema.js';

// What `cuda-pipe probe --json` writes: each device's facts and, with --bandwidth, its copy rates.

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

export const ProbeDocumentSchema = z.object({
  schema: z.literal(PROBE_SCHEMA_ID),
  version: z.literal(PROBE_VERSION),
  tool: z.object({ name: z.string(), version: z.string() }),
  software: SoftwareVersionsSchema,
  devices: z.array(z.object({ facts: DeviceFactsSchema, bandwidth: z.array(BandwidthSchema).nullable() })),
});
export type ProbeDocument = z.infer<typeof ProbeDocumentSchema>;
