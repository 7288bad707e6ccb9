import { isDeviceIndex, MAX_DEVICE_INDEX } from '../../../vocabulary.js';
import { type ChromeReads, shown, type TopFields, type TraceRecord, type TraceRecords } from '../../chrome/record.js';
import { traceError } from '../../errors.js';
import type { GpuEvent, GpuKind, ParsedTrace, StepMark } from '../../events.js';
import type { Sniffed } from '../format.js';

// The Chrome trace `cuda-pipe run --trace` writes (src/report/trace.ts): a process per device (pid = device + 1),
// a "mode" track whose events are the traced reps, a track per stream ("stream <name>") whose events are the ops
// with `cat` the op's kind, and engine tracks that repeat the ops (skipped here, so nothing counts twice). Each
// traced rep is a step. Where CUPTI timed an op, its engine's interval (`args.engineStartMs`/`engineEndMs`, on the
// rep's clock) is taken, as `run`'s own analysis does. The format has no host calls, so the findings that need
// them (host-sync, host-bound) cannot be made.

/** Copies, by their op's kind: the trace's `cat`. */
const COPIES: Readonly<Record<string, GpuEvent['direction']>> = { h2d: 'h2d', d2h: 'd2h', peer: 'p2p' };

/** Host functions run on the CPU: no GPU work of a step. */
const HOST_CAT = 'host';

/**
 * How an op's event reads: a copy by its `cat`; any other op a stream runs (a kernel or a library's call, whatever
 * its stage kind) is kernel work, communication where it names a collective (`args.collective`; before that field
 * was written, `cat` collective). Null: not an op of a step (a host function, a rep, track metadata).
 */
function kindOf(
  cat: unknown,
  args: Readonly<Record<string, unknown>>,
): { kind: GpuKind; direction: GpuEvent['direction']; communication: boolean } | null {
  if (typeof cat !== 'string' || cat === REP_CAT || cat === HOST_CAT) return null;
  const direction = COPIES[cat];
  if (direction !== undefined) return { kind: 'memcpy', direction, communication: false };
  return {
    kind: 'kernel',
    direction: null,
    communication: typeof args.collective === 'string' || cat === 'collective',
  };
}

/** The `cat` of a traced rep's event on the "mode" track: `report/trace.ts` writes no other there. */
const REP_CAT = 'rep';

const TOOL = 'otherData.tool';

/** The fields it reads: the tracks' names (`args.name`), the ops' times on their rep's clock, and the writing tool. */
export const OWN_READS: ChromeReads = {
  event: ['ph', 'cat', 'name', 'pid', 'tid', 'ts', 'dur'],
  args: ['name', 'stream', 'bytes', 'collective', 'startMs', 'engineStartMs', 'engineEndMs', 'issuedMs'],
  topValues: [TOOL],
};

/** The events this parser reads: the tracks' names, the ops of its kinds, and the traced reps. */
export function ownKeeps(record: TraceRecord): boolean {
  const { ph, cat, name } = record.event;
  if (ph === 'M') return name === 'thread_name' && typeof record.args.name === 'string';
  return ph === 'X' && typeof cat === 'string' && cat !== HOST_CAT;
}

/** A trace cuda-pipe wrote: marked by its `otherData.tool`. */
export function sniffOwnTrace(top: TopFields): Sniffed {
  const tool = top.values[TOOL];
  return typeof tool === 'string' && /^cuda-pipe /.test(tool) ? 'marked' : null;
}

/** `records` are the trace's kept events in file order (`ownKeeps`): track names may come after their events. */
export function parseOwnTrace(file: string, records: TraceRecords): ParsedTrace {
  const tracks = new Map<string, string>();
  for (const { event: e, args } of records) {
    if (e.ph === 'M' && e.name === 'thread_name' && typeof args.name === 'string')
      tracks.set(`${String(e.pid)}/${String(e.tid)}`, args.name);
  }
  const gpu: GpuEvent[] = [];
  const steps: StepMark[] = [];
  for (const { index, event: e, args } of records) {
    if (e.ph !== 'X') continue;
    const track = tracks.get(`${String(e.pid)}/${String(e.tid)}`) ?? '';
    const isStep = track === 'mode';
    const kind = track.startsWith('stream ') ? kindOf(e.cat, args) : null;
    if (!isStep && !kind) continue;
    const where = `traceEvents[${index}] (${String(e.cat)} "${String(e.name).slice(0, 60)}")`;
    if (typeof e.pid !== 'number' || !isDeviceIndex(e.pid - 1))
      throw traceError(
        file,
        `${where} has pid ${shown(e.pid)}, not a device's process (a whole number from 1 to ${MAX_DEVICE_INDEX + 1})`,
      );
    if (typeof e.ts !== 'number' || !Number.isFinite(e.ts))
      throw traceError(file, `${where} has ts ${shown(e.ts)}, not a finite number of µs`);
    if (typeof e.dur !== 'number' || !Number.isFinite(e.dur) || e.dur < 0)
      throw traceError(file, `${where} has dur ${shown(e.dur)}, not a duration of 0 µs or more`);
    const device = e.pid - 1;
    const start = e.ts / 1000;
    const end = (e.ts + e.dur) / 1000;
    if (isStep) {
      steps.push({ name: String(e.name), clock: 'gpu', device, start, end });
      continue;
    }
    const num = (key: 'startMs' | 'engineStartMs' | 'engineEndMs' | 'issuedMs' | 'bytes'): number | null => {
      const value = args[key];
      return typeof value === 'number' && Number.isFinite(value) ? value : null;
    };
    // As the Kineto and Nsight readers do: a count of bytes or nothing, never one that would make a rate negative.
    const { bytes } = args;
    if (bytes !== undefined && bytes !== null && (typeof bytes !== 'number' || !Number.isFinite(bytes) || bytes < 0))
      throw traceError(file, `${where} has args.bytes ${shown(bytes)}, not a count of bytes`);
    // The op's own times are on its rep's clock; `offset` moves them onto the trace's.
    const startMs = num('startMs');
    const offset = startMs === null ? null : start - startMs;
    const engineStart = num('engineStartMs');
    const engineEnd = num('engineEndMs');
    const issuedMs = num('issuedMs');
    const engine = offset !== null && engineStart !== null && engineEnd !== null && engineEnd >= engineStart;
    gpu.push({
      device,
      stream: typeof args.stream === 'string' ? args.stream : track.slice('stream '.length),
      kind: kind!.kind,
      start: engine ? offset + engineStart : start,
      end: engine ? offset + engineEnd : end,
      bytes: kind!.kind === 'memcpy' ? num('bytes') : null,
      direction: kind!.direction,
      hostMemory: null,
      name: String(e.name),
      correlation: null,
      communication: kind!.communication,
      issued: offset !== null && issuedMs !== null ? offset + issuedMs : null,
      defaultStream: false,
    });
  }
  return {
    file,
    format: 'cuda-pipe',
    rank: null,
    gpu,
    host: [],
    steps,
    notes: [
      "a cuda-pipe trace has no host calls: host-sync and host-bound are not looked for, and copies' host memory kind is not in it (the Result's buffers say it)",
    ],
  };
}
