import { z } from 'zod';
import { BUFFER_ROLES } from '../vocabulary.js';

// What a run measured: its config, buffers and kernels, and the repetition policy. Version 1 had them in the same
// shape, so v1.ts reads them from here too.

export const ConfigRecordSchema = z.object({
  name: z.string(),
  path: z.string().nullable(),
  hash: z.string(),
  /** The config as written, with command-line overrides applied. */
  resolved: z.unknown(),
});

export const BufferRecordSchema = z.object({
  name: z.string(),
  type: z.string(),
  elements: z.number(),
  bytes: z.number(),
  role: z.enum(BUFFER_ROLES),
  /** 'device-only' for scratch buffers. */
  hostMemory: z.string(),
  /** Added within version 2: elements per item, where the config gave pipeline.items and it is not 1. */
  itemSize: z.number().int().min(1).optional(),
});

export const KernelRecordSchema = z.object({
  label: z.string(),
  entry: z.string(),
  source: z.string(),
  block: z.number().int(),
  grid: z.union([z.literal('auto'), z.literal('cover'), z.number()]),
  compile: z.object({ cached: z.boolean(), ms: z.number(), arch: z.string(), nvrtc: z.string() }),
});

export const PolicyRecordSchema = z.object({
  warmup: z.number().int(),
  warmupMs: z.number(),
  fixedReps: z.number().int().nullable(),
  minReps: z.number().int(),
  maxReps: z.number().int(),
  /** Fraction, 0.005 = 0.5%. */
  maxNoise: z.number(),
  maxTimeMs: z.number(),
  /** True when a gate kernel held the streams until each rep was issued: times exclude host issue cost. */
  gate: z.boolean(),
});
