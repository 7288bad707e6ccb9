import { formatBytes } from '../format.js';
import { roleLabel } from './labels.js';
import { describeOp } from '../plan/describe.js';
import { type CopyOp, type Plan, type Schedule, scheduleOps } from '../plan/types.js';

/** `run --dry-run`: which stream does what, in which order, how many bytes. Needs no GPU. */
export function renderPlan(plan: Plan): string {
  const lines: string[] = [];
  lines.push(`Plan for ${plan.name} on device ${plan.devices.join(', ')}: ${plan.elements} elements per buffer`);
  for (const b of plan.buffers) {
    lines.push(`  buffer ${b.name}: ${b.type} × ${b.elements} = ${formatBytes(b.bytes)}, ${b.role}, ${b.role === "scratch" ? "device only" : `${b.hostMemory} host memory`}`);
  }
  for (const k of plan.kernels) lines.push(`  kernel ${k.label}: ${k.entry} from ${k.sourcePath}, block ${k.block}, grid ${k.grid}`);
  for (const schedule of plan.schedules) {
    if (schedule.role.kind !== 'overlapped') continue;
    const { layout } = schedule.role;
    const size = schedule.ranges[0]?.count ?? 0;
    const last = schedule.ranges[schedule.ranges.length - 1];
    const plain = layout.topology === 'chunk-per-stream' && Object.keys(layout).length === 4;
    lines.push(`  layout: ${layout.chunks} chunks of ${size} elements${last && last.count !== size ? ` (the last ${last.count})` : ''}, ` +
      `${layout.streams} streams, ${layout.order}${plan.pipeline.align > 1 ? `, aligned to ${plan.pipeline.align} elements` : ''}` +
      (plain ? '' : ` (${roleLabel(schedule.role)})`));
  }
  const { ring, budgetBytes } = plan.device;
  if (ring) {
    lines.push(`  device: a ring of ${ring.slots} slots of ${ring.slotElements} elements per buffer` +
      `${budgetBytes === null ? '' : ` within the ${formatBytes(budgetBytes)} budget`}; chunk i uses slot i mod ${ring.slots}`);
  }
  for (const note of plan.notes) lines.push(`  note: ${note}`);
  for (const schedule of plan.schedules) lines.push('', ...renderSchedule(schedule, plan));
  return lines.join('\n');
}

function renderSchedule(schedule: Schedule, plan: Plan): string[] {
  const lines = [`mode ${schedule.id}: ${schedule.description}; H2D ${formatBytes(schedule.bytes.h2d)}, D2H ${formatBytes(schedule.bytes.d2h)}` +
    (schedule.verify ? '; outputs verified' : '')];
  for (const stream of schedule.streams) {
    const ops = schedule.body.filter((o) => o.stream === stream.id);
    const copies = ops.filter((o): o is CopyOp => o.kind === 'copy');
    const kernels = ops.filter((o) => o.kind === 'kernel').length;
    const chunks = [...new Set(ops.flatMap((o) => ('chunk' in o && o.chunk !== null ? [o.chunk] : [])))];
    const bytes = (d: 'h2d' | 'd2h') => formatBytes(copies.filter((c) => c.direction === d).reduce((s, c) => s + c.bytes, 0));
    const priority = stream.priority ? `, priority ${stream.priority.level}` : '';
    lines.push(`  stream ${stream.id} (${stream.kind}${priority}): ${chunks.length ? `chunks ${chunks.join(', ')}; ` : ''}` +
      `H2D ${bytes('h2d')}, ${kernels} kernel launches, D2H ${bytes('d2h')}`);
  }
  scheduleOps(schedule).forEach((op, i) => lines.push(`  ${String(i + 1).padStart(4)}  ${op.stream.padEnd(4)} ${describeOp(op, schedule, plan.kernels)}`));
  return lines;
}
