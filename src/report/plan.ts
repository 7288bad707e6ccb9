import { formatBytes } from '../format.js';
import { roleLabel } from './labels.js';
import { describeOp } from '../plan/describe.js';
import { type Op, type Plan, type Schedule, scheduleOps } from '../plan/types.js';
import { nounCounts, opBytes, stage } from '../kinds/index.js';

export interface PlanView {
  /** Every op of every mode in issue order, not only the summary. */
  readonly ops?: boolean;
  /** What became of compiling the kernels (dry runs compile them when NVRTC is here). */
  readonly kernels?: string;
  /** "rank 1 of 2" when a launcher started this process, so that each rank's plan says whose it is. */
  readonly rank?: string | null;
}

/**
 * `run --dry-run`: which stream does what, how many ops, how many bytes; with `ops`, every op in order. Needs no GPU.
 */
export function renderPlan(plan: Plan, view: PlanView = {}): string {
  return [...planPieces(plan, view)].join('\n');
}

/** Op lines a piece of `planPieces` holds at most. */
const OPS_PER_PIECE = 4096;

/**
 * `renderPlan`'s text in pieces, each of a few thousand lines at most, to be joined with newlines: a plan of many
 * chunks listed with --ops is tens of MB, which the dry run writes a piece at a time, turning the event loop between
 * pieces so that a signal ends it at once.
 */
export function* planPieces(plan: Plan, view: PlanView = {}): Generator<string> {
  const lines: string[] = [];
  const items = plan.pipeline.items !== undefined;
  const unit = items ? 'items' : 'elements';
  lines.push(
    `Plan for ${plan.name} on device ${plan.devices.join(', ')}${view.rank ? ` (${view.rank})` : ''}: ${plan.elements} ${items ? 'items per rep' : 'elements per buffer'}`,
  );
  for (const b of plan.buffers) {
    const shape =
      b.role === 'resident'
        ? ': copied to the device once before timing, read whole by every chunk'
        : items
          ? `, ${b.itemSize} per item`
          : '';
    lines.push(
      `  buffer ${b.name}: ${b.type} × ${b.elements} = ${formatBytes(b.bytes)}, ${b.role}, ${b.role === 'scratch' ? 'device only' : `${b.hostMemory} host memory`}${shape}`,
    );
  }
  for (const k of plan.kernels)
    lines.push(`  kernel ${k.label}: ${k.entry} from ${k.sourcePath}, block ${k.block}, grid ${k.grid}`);
  if (view.kernels) lines.push(`  ${view.kernels}`);
  for (const schedule of plan.schedules) {
    if (schedule.role.kind !== 'overlapped') continue;
    const { layout } = schedule.role;
    const size = schedule.ranges[0]?.count ?? 0;
    const last = schedule.ranges[schedule.ranges.length - 1];
    const plain = layout.topology === 'chunk-per-stream' && Object.keys(layout).length === 4;
    lines.push(
      `  layout: ${layout.chunks} chunks of ${size} ${unit}${last && last.count !== size ? ` (the last ${last.count})` : ''}, ` +
        `${layout.streams} streams, ${layout.order}${plan.pipeline.align > 1 ? `, aligned to ${plan.pipeline.align} ${unit}` : ''}` +
        (plain ? '' : ` (${roleLabel(schedule.role)})`),
    );
  }
  const { connections } = plan.pipeline;
  if (connections !== undefined) {
    lines.push(
      `  hardware queues: ${connections} (pipeline.connections: CUDA_DEVICE_MAX_CONNECTIONS=${connections} for this process)`,
    );
  }
  const { ring, budgetBytes } = plan.device;
  if (ring) {
    lines.push(
      `  device: a ring of ${ring.slots} slots of ${ring.slotElements} ${unit} per buffer` +
        `${budgetBytes === null ? '' : ` within the ${formatBytes(budgetBytes)} budget`}; chunk i uses slot i mod ${ring.slots}`,
    );
  }
  const resident = plan.buffers.filter((b) => b.role === 'resident');
  if (resident.length) {
    const residentBytes = resident.reduce((sum, b) => sum + b.bytes, 0);
    const chunked = plan.buffers
      .filter((b) => b.role !== 'resident')
      .reduce((sum, b) => sum + plan.device.elements * b.itemSize * b.elementBytes, 0);
    lines.push(
      `  device memory: ${formatBytes(chunked + residentBytes)}, of which resident ${formatBytes(residentBytes)} (in no mode's copied bytes)`,
    );
  }
  for (const note of plan.notes) lines.push(`  note: ${note}`);
  yield lines.join('\n');
  for (const schedule of plan.schedules) {
    const all = scheduleOps(schedule);
    yield ['', ...renderSchedule(schedule, all, plan)].join('\n');
    if (!view.ops) continue;
    // Each piece's lines made as it is asked for: a spread of every op's line overflows the stack, and making them
    // all at once would hold the signal off until the last.
    for (let first = 0; first < all.length; first += OPS_PER_PIECE) {
      const lines: string[] = [];
      for (let i = first; i < Math.min(all.length, first + OPS_PER_PIECE); i++) {
        const op = all[i] as Op;
        lines.push(`  ${String(i + 1).padStart(4)}  ${op.stream.padEnd(4)} ${describeOp(op, schedule, plan.kernels)}`);
      }
      yield lines.join('\n');
    }
  }
  if (!view.ops) yield ['', 'Every op of every mode, in issue order: --ops.'].join('\n');
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
// The gate and the empty kernel are launches of the plan's own, counted with the kernels'.
const OWN_LAUNCHES: readonly Op['kind'][] = ['gate', 'empty'];
const LAUNCH = stage('kernel').look.noun?.one;

/** Each noun the stage table counts ops as, over these ops: the plan's own launches with the kernels'. */
function counted(ops: readonly Op[]) {
  const own = ops.filter((o) => OWN_LAUNCHES.includes(o.kind)).length;
  return nounCounts(ops).map((n) => ({ ...n, count: n.count + (n.one === LAUNCH ? own : 0) }));
}

/** A schedule's op counts: the nouns every plan shows, its event records and waits, then the nouns it has ops of. */
function opCounts(ops: readonly Op[]): string {
  const nouns = counted(ops);
  const shown = (always: boolean) =>
    nouns.filter((n) => n.always === always && (always || n.count > 0)).map((n) => plural(n.count, n.one, n.many));
  const sync = ops.filter((o) => o.kind === 'record' || o.kind === 'wait').length;
  return `${plural(ops.length, 'op')} (${[...shown(true), plural(sync, 'event record or wait', 'event records and waits'), ...shown(false)].join(', ')})`;
}

/** "chunks 1, 3" or, for many, "2500 chunks: 1, 5, 9, …, 9997", so that a summary stays a line. */
function chunkList(chunks: readonly number[]): string {
  if (chunks.length <= 8) return `chunk${chunks.length === 1 ? '' : 's'} ${chunks.join(', ')}`;
  return `${chunks.length} chunks: ${chunks.slice(0, 3).join(', ')}, …, ${chunks[chunks.length - 1]}`;
}

/**
 * What a run will do to check the mode, in the future tense: a dry run runs nothing, so nothing is verified yet.
 */
function verifyWords(schedule: Schedule, plan: Plan): string {
  if (!schedule.verify) return '';
  return plan.buffers.some((b) => b.role === 'out' || b.role === 'inout')
    ? '; its outputs will be verified'
    : '; it will run once checked (no output to compare)';
}

/** A schedule's summary: its line, then one per stream; `all` its ops, the prologue's and epilogue's included. */
function renderSchedule(schedule: Schedule, all: readonly Op[], plan: Plan): string[] {
  const gpus = [...new Set(schedule.streams.map((s) => s.device))];
  const on = plan.devices.length > 1 ? ` on GPU${gpus.length > 1 ? 's' : ''} ${gpus.join(' and ')}` : '';
  const peer = `${schedule.bytes.peer ? `, peer ${formatBytes(schedule.bytes.peer)}` : ''}${schedule.bytes.collective ? `, collectives ${formatBytes(schedule.bytes.collective)} per rank` : ''}`;
  const lines = [
    `mode ${schedule.id}: ${schedule.description}; ${opCounts(all)} on ${plural(schedule.streams.length, 'stream')}${on}; ` +
      `H2D ${formatBytes(schedule.bytes.h2d)}, D2H ${formatBytes(schedule.bytes.d2h)}${peer}${verifyWords(schedule, plan)}`,
  ];
  // Every op, the prologue's gate and epilogue's joins too, as the mode's line counts them, so the streams add up to
  // it.
  const byStream = new Map<string, Op[]>(schedule.streams.map((s) => [s.id, []]));
  for (const op of all) byStream.get(op.stream)?.push(op);
  for (const stream of schedule.streams) {
    const ops = byStream.get(stream.id) ?? [];
    const moved = opBytes(ops);
    const launches = counted(ops).find((n) => n.one === LAUNCH)?.count ?? 0;
    const chunks = [...new Set(ops.flatMap((o) => ('chunk' in o && o.chunk !== null ? [o.chunk] : [])))];
    const bytes = (d: 'h2d' | 'd2h') => formatBytes(moved[d]);
    const peers = moved.peer;
    const priority = stream.priority ? `, priority ${stream.priority.level}` : '';
    lines.push(
      `  stream ${stream.id} (${stream.kind}${priority}): ${chunks.length ? `${chunkList(chunks)}; ` : ''}` +
        `H2D ${bytes('h2d')}, ${plural(launches, 'kernel launch', 'kernel launches')}, D2H ${bytes('d2h')}${peers ? `, peer copies ${formatBytes(peers)}` : ''}`,
    );
  }
  return lines;
}
