import { z } from 'zod';

// The part of Chrome's Trace Event Format (the "Trace Event Format" document of the Catapult project, JSON Object
// Format) that cuda-pipe writes: complete events and the metadata events that name and order processes and threads.
// Written from the format's description, independently of src/report/trace.ts, to check what it emits. Strict
// objects: a field outside this subset is a mistake here, though the format itself tolerates extra fields.

const argValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

const common = {
  /** The event's name, shown on its slice. */
  name: z.string().min(1),
  /** Process and thread ids: integers. */
  pid: z.number().int().nonnegative(),
  tid: z.number().int().nonnegative(),
  /** Timestamp in microseconds (fractions allowed). */
  ts: z.number().nonnegative().finite(),
};

/** ph 'X': a complete event, a begin and end pair in one, with its duration in microseconds. */
export const CompleteEventSchema = z.strictObject({
  ...common,
  ph: z.literal('X'),
  dur: z.number().nonnegative().finite(),
  /** Comma-separated categories. */
  cat: z.string().optional(),
  args: z.record(z.string(), argValue).optional(),
});

/** ph 'M': metadata. Its name says what it sets, and args carry the value. */
export const MetadataEventSchema = z.union([
  z.strictObject({
    ...common,
    ph: z.literal('M'),
    name: z.enum(['process_name', 'thread_name']),
    args: z.strictObject({ name: z.string().min(1) }),
  }),
  z.strictObject({
    ...common,
    ph: z.literal('M'),
    name: z.literal('process_labels'),
    args: z.strictObject({ labels: z.string() }),
  }),
  z.strictObject({
    ...common,
    ph: z.literal('M'),
    name: z.enum(['process_sort_index', 'thread_sort_index']),
    args: z.strictObject({ sort_index: z.number().int() }),
  }),
]);

export const TraceEventSchema = z.union([CompleteEventSchema, MetadataEventSchema]);

/** The JSON Object Format: the events, plus optional display unit and free-form metadata. */
export const TraceDocumentSchema = z.strictObject({
  traceEvents: z.array(TraceEventSchema),
  displayTimeUnit: z.enum(['ms', 'ns']).optional(),
  otherData: z.record(z.string(), z.string()).optional(),
});

export type ParsedTrace = z.infer<typeof TraceDocumentSchema>;
