import type { Op, Plan, Schedule } from '../plan/types.js';
import { formatBytes } from './format.js';

/** `run --dry-run`: which stream does what, in which order, how many bytes. Needs no GPU. */
export function renderPlan(plan: Plan): string {
  const lines: string[] = [];
  const { layout } = plan;
  const last = layout.ranges[layout.ranges.length - 1];
  lines.push(`Plan for ${plan.name} on device ${plan.device}: ${plan.elements} elements per buffer`);
  for (const b of plan.buffers) {
    lines.push(`  buffer ${b.name}: ${b.type} × ${b.elements} = ${formatBytes(b.bytes)}, ${b.role}, ${b.role === "scratch" ? "device only" : `${b.hostMemory} host memory`}`);
  }
  for (const k of plan.kernels) lines.push(`  kernel ${k.label}: ${k.entry} from ${k.sourcePath}, block ${k.block}, grid ${k.grid}`);
  const size = layout.ranges[0]?.count ?? 0;
  lines.push(`  layout: ${layout.chunks} chunks of ${size} elements${last && last.count !== size ? ` (the last ${last.count})` : ''}, ` +
    `${layout.streams} streams, ${layout.orders.join(" and ")}${layout.align > 1 ? `, aligned to ${layout.align} elements` : ''}`);
  for (const note of plan.notes) lines.push(`  note: ${note}`);
  for (const schedule of plan.schedules) lines.push('', ...renderSchedule(schedule));
  return lines.join('\n');
}

function renderSchedule(schedule: Schedule): string[] {
  const lines = [`mode ${schedule.id}: ${schedule.description}; H2D ${formatBytes(schedule.bytes.h2d)}, D2H ${formatBytes(schedule.bytes.d2h)}` +
    (schedule.verify ? '; outputs verified' : '')];
  for (const stream of schedule.streams) {
    const ops = schedule.ops.filter((o) => o.stream === stream.id);
    const copies = ops.filter((o): o is Extract<Op, { kind: 'copy' }> => o.kind === 'copy');
    const kernels = ops.filter((o) => o.kind === 'kernel').length;
    const chunks = [...new Set(ops.flatMap((o) => ('chunk' in o && o.chunk !== null ? [o.chunk] : [])))];
    const bytes = (d: 'h2d' | 'd2h') => formatBytes(copies.filter((c) => c.direction === d).reduce((s, c) => s + c.bytes, 0));
    lines.push(`  stream ${stream.id} (${stream.flags}): ${chunks.length ? `chunks ${chunks.join(', ')}; ` : ''}` +
      `H2D ${bytes('h2d')}, ${kernels} kernel launches, D2H ${bytes('d2h')}`);
  }
  schedule.ops.forEach((op, i) => lines.push(`  ${String(i + 1).padStart(4)}  ${op.stream.padEnd(4)} ${describe(op)}`));
  return lines;
}

function describe(op: Op): string {
  const chunk = (c: number | null) => (c === null ? 'whole' : `chunk ${c}`);
  switch (op.kind) {
    case 'copy':
      return `${op.direction === 'h2d' ? 'H2D' : 'D2H'} ${op.buffer} [${op.hostOffset}, ${op.hostOffset + op.bytes}) ${formatBytes(op.bytes)}, ${chunk(op.chunk)}`;
    case 'kernel':
      return `kernel ${op.kernel} elements [${op.first}, ${op.first + op.count}), ${chunk(op.chunk)}`;
    case 'record':
      return `record ${op.event}`;
    case 'wait':
      return `wait ${op.event}`;
    case 'host':
      return `host function ${op.name}`;
    case 'gate':
      return 'gate: hold until the whole rep is issued';
  }
}
