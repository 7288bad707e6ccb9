import { z } from 'zod';

// The parts of a Result about several devices in one run: how the input split across them scaled, and how a
// pipeline across two of them did. Both are derived from the modes (measure/scaling.ts) and kept so that JSON
// readers (a CI job) get the figures without redoing the arithmetic.

export const PeerPathSchema = z.object({
  from: z.number().int(),
  to: z.number().int(),
  /** peer: peer access enabled, device to device (NVLink or PCIe); staged: the driver copied through host memory. */
  path: z.enum(['peer', 'staged']),
});
export type PeerPathRecord = z.infer<typeof PeerPathSchema>;

export const DeviceTimesSchema = z.object({
  device: z.number().int(),
  /** That device's own start-to-end time in each timed rep, from its own events, ms. */
  samplesMs: z.array(z.number()),
  medianMs: z.number(),
});

export const ScalingLimitSchema = z.enum(['none', 'memory system', 'host issue', 'share size']);

export const ScalingSchema = z.object({
  devices: z.array(z.number().int()),
  /** The headline overlapped layout with the whole input on the first device. */
  oneDevice: z.object({ mode: z.string(), device: z.number().int(), medianMs: z.number(), gbPerSecond: z.number() }),
  /**
   * Every device at once, each over its share; `gbPerSecond` is the aggregate, both directions' bytes over the time.
   */
  together: z.object({
    mode: z.string(),
    medianMs: z.number(),
    gbPerSecond: z.number(),
    /**
     * Host time to issue one rep for every device from the one JS thread (a host timer), and how many calls it made.
     */
    hostIssueMs: z.number(),
    issuedOps: z.number().int(),
  }),
  /** one device's median / all devices' median */
  speedup: z.number(),
  /** speedup / devices */
  efficiency: z.number(),
  perDevice: z.array(
    z.object({
      device: z.number().int(),
      bytes: z.number(),
      /** Its share's time with every device running, from its own events. */
      togetherMs: z.number(),
      gbPerSecond: z.number(),
      /** Its share's time running by itself; null when not measured. */
      aloneMs: z.number().nullable(),
      aloneGbPerSecond: z.number().nullable(),
    }),
  ),
  /**
   * Each device's share copied both ways at once (the link at its best) alone and with every device at once, and
   * all of them together: what the host gives the links; null when data moves one way only.
   */
  links: z
    .object({
      perDevice: z.array(
        z.object({
          device: z.number().int(),
          aloneGbPerSecond: z.number().nullable(),
          togetherGbPerSecond: z.number().nullable(),
        }),
      ),
      togetherGbPerSecond: z.number(),
      /** All links at once against one device's pipeline: the most this split can scale to while it is copy-bound. */
      ceiling: z.number(),
    })
    .nullable(),
  limit: ScalingLimitSchema,
  /** The limit in words, with the figures that show it. */
  why: z.string(),
});
export type Scaling = z.infer<typeof ScalingSchema>;

export const CrossDeviceSchema = z.object({
  mode: z.string(),
  from: z.number().int(),
  to: z.number().int(),
  path: z.enum(['peer', 'staged']),
  medianMs: z.number(),
  /** The serial baseline on the first device, and the same layout on it alone. */
  serialMs: z.number(),
  speedup: z.number(),
  oneDeviceMs: z.number().nullable(),
  /** The handed-over buffers copied whole, alone. */
  peerCopy: z.object({ bytes: z.number(), medianMs: z.number(), gbPerSecond: z.number() }).nullable(),
});
export type CrossDevice = z.infer<typeof CrossDeviceSchema>;
