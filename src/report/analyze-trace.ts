import type { AnalysisDocument } from '../analysis/document.js';
import type { GpuEvent, HostCall, ParsedTrace } from '../traces/events.js';
import { escapeControl } from '../format.js';
import { participantName, who } from './analyze.js';
import { inLanes, type TraceDocument, type TraceEvent } from './trace.js';

// `analyze --trace`: what was analysed, as Chrome Trace Event JSON for Perfetto and chrome://tracing, in run's
// convention (report/trace.ts: a process per device, pids from 1, a track per stream, complete events in µs):
// - per device of each trace, a process named for its rank and GPU, with a "steps" track (each step's GPU span as
//   analysed, its figures in args), a "findings" track (each finding as an instant at the device's first step, its
//   ms and sentence in args), and a track per stream holding the kernels, copies and memsets read from the trace;
// - per trace with host calls, a process "host" with the launches and synchronizes that host wait and host-sync
//   were judged by;
// - with several ranks, each paired collective as an instant on the "collectives" track of its last arriver, its
//   skew in args.
// A track's events must nest or follow each other (viewers misdraw overlapping slices): a stream's or the host's
// events that overlap (several host threads, one track) go to extra lanes, "stream 7 (2)".
// Times are the trace's own (µs, as Kineto writes them), so the events line up with the original trace.

const TID = { steps: 1, findings: 2, collectives: 3, stream: 10 } as const;

export function renderAnalysisTrace(document: AnalysisDocument, traces: readonly ParsedTrace[]): string {
  return `${JSON.stringify(buildAnalysisTrace(document, traces))}\n`;
}

export function buildAnalysisTrace(document: AnalysisDocument, traces: readonly ParsedTrace[]): TraceDocument {
  const events: TraceEvent[] = [];
  const pidOf = new Map<string, number>();
  document.devices.forEach((device, i) => {
    const pid = i + 1;
    pidOf.set(`${device.file}\0${device.device}`, pid);
    events.push(
      meta('process_name', pid, 0, `${who(device)} (${escapeControl(device.file)})`),
      meta('thread_name', pid, TID.steps, 'steps'),
    );
    for (const s of device.steps) {
      events.push({
        name: escapeControl(s.name),
        ph: 'X',
        pid,
        tid: TID.steps,
        ts: s.startMs * 1000,
        dur: s.ms * 1000,
        cat: 'step',
        args: {
          ms: s.ms,
          idleMs: s.idleMs,
          hostWaitMs: s.hostWaitMs,
          kernelWaitMs: s.kernelWaitMs,
          syncWaitMs: s.syncWaitMs,
          otherIdleMs: s.otherIdleMs,
          exposedCopyMs: s.exposedCopyMs,
          exposedCommMs: s.exposedCommMs,
          floorMs: s.floor.ms,
          efficiency: s.efficiency,
        },
      });
    }
    const findings = document.findings.filter((f) => f.file === device.file && f.device === device.device);
    if (findings.length) events.push(meta('thread_name', pid, TID.findings, 'findings'));
    const at = (device.steps[0]?.startMs ?? 0) * 1000;
    for (const f of findings)
      events.push({
        name: f.code,
        ph: 'i',
        s: 't',
        pid,
        tid: TID.findings,
        ts: at,
        cat: 'finding',
        args: { ms: f.ms, steps: f.steps, message: f.message },
      });
  });
  const hostPid = document.devices.length + 1;
  traces.forEach((trace, t) => {
    const byDevice = new Map<number, GpuEvent[]>();
    for (const e of trace.gpu) {
      const own = byDevice.get(e.device);
      if (own) own.push(e);
      else byDevice.set(e.device, [e]);
    }
    for (const [device, gpu] of byDevice) {
      const pid = pidOf.get(`${trace.file}\0${device}`);
      if (pid !== undefined) append(events, streamEvents(pid, gpu));
    }
    if (trace.host.length) append(events, hostEvents(hostPid + t, trace.file, trace.host));
  });
  const c = document.collectives;
  if (c?.kind === 'measured') {
    const pids = c.participants.map((p) => pidOf.get(`${p.file}\0${p.device}`));
    for (const pid of new Set(pids))
      if (pid !== undefined) events.push(meta('thread_name', pid, TID.collectives, 'collectives (as last to arrive)'));
    for (const call of c.calls) {
      if (call.last === null) continue;
      const pid = pids[call.last];
      if (pid === undefined) continue;
      events.push({
        name: `${escapeControl(call.name)} #${call.order + 1}`,
        ph: 'i',
        s: 't',
        pid,
        tid: TID.collectives,
        ts: call.startsMs[call.last]! * 1000,
        cat: 'collective',
        args: {
          step: escapeControl(call.step),
          skewMs: call.skewMs,
          last: participantName(c.participants[call.last]!),
        },
      });
    }
  }
  return {
    traceEvents: events,
    displayTimeUnit: 'ns',
    otherData: {
      tool: `${document.tool.name} ${document.tool.version}`,
      document: `${document.schema} version ${document.version}`,
    },
  };
}

/** Each stream a track (more where its events overlap), named for it. */
function streamEvents(pid: number, gpu: readonly GpuEvent[]): TraceEvent[] {
  const streams = [...new Set(gpu.map((e) => e.stream))].sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
  const out: TraceEvent[] = [];
  let tid = TID.stream;
  for (const stream of streams) {
    const lanes = inLanes(
      gpu.filter((e) => e.stream === stream),
      (e) => e,
    );
    lanes.forEach((lane, i) => {
      out.push(meta('thread_name', pid, tid, `stream ${escapeControl(stream)}${i ? ` (${i + 1})` : ''}`));
      for (const e of lane)
        out.push({
          name: escapeControl(e.name),
          ph: 'X',
          pid,
          tid,
          ts: e.start * 1000,
          dur: (e.end - e.start) * 1000,
          cat: e.communication ? 'communication' : e.kind,
          args: {
            stream: escapeControl(e.stream),
            bytes: e.bytes,
            direction: e.direction,
            hostMemory: e.hostMemory,
            correlation: e.correlation,
          },
        });
      tid += 1;
    });
  }
  return out;
}

/** The host's CUDA calls, on as many tracks as overlapping calls (several threads) need. */
function hostEvents(pid: number, file: string, host: readonly HostCall[]): TraceEvent[] {
  const out: TraceEvent[] = [meta('process_name', pid, 0, `host of ${escapeControl(file)}`)];
  inLanes(host, (h) => h).forEach((lane, i) => {
    out.push(meta('thread_name', pid, i + 1, `CUDA calls${i ? ` (${i + 1})` : ''}`));
    for (const h of lane)
      out.push({
        name: escapeControl(h.name),
        ph: 'X',
        pid,
        tid: i + 1,
        ts: h.start * 1000,
        dur: (h.end - h.start) * 1000,
        cat: h.kind,
        args: { correlation: h.correlation },
      });
  });
  return out;
}

/** push(...more) passes each element as an argument, which overflows the stack for a million events. */
function append<T>(to: T[], more: readonly T[]): void {
  for (const item of more) to.push(item);
}

function meta(name: 'process_name' | 'thread_name', pid: number, tid: number, value: string): TraceEvent {
  return { name, ph: 'M', pid, tid, ts: 0, args: { name: value } };
}
