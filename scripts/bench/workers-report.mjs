// What a host stage on workers cost, from saved Results (issue 18): per file, each overlapped mode with a CPU stage
// against its twin without it, and from its traced rep the hand-over of each chunk: how long after the chunk's D2H
// ended (GPU clock, from the start event) its task started (host clock, from issuing the start event; the two
// clocks meet at the start event), and how long the last task ran past the GPU's end. Usage:
//   node scripts/bench/workers-report.mjs RESULT.json...
import { readFileSync } from 'node:fs';

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * (s.length - 1)))] : Number.NaN;
};
const ms = (x) => `${x.toFixed(3)} ms`;

for (const file of process.argv.slice(2)) {
  const result = JSON.parse(readFileSync(file, 'utf8'));
  for (const mode of result.modes.filter((m) => m.role.kind === 'overlapped' && m.cpuStage)) {
    const layout = mode.role.layout;
    const twin = result.modes.find(
      (m) =>
        m.role.kind === 'overlapped' &&
        !m.cpuStage &&
        m.role.layout.chunks === layout.chunks &&
        m.role.layout.streams === layout.streams &&
        m.role.layout.order === layout.order,
    );
    const stage = mode.cpuStage;
    const line = [
      `${file}: ${mode.description}: ${ms(mode.stats.median)} (min ${ms(mode.stats.min)}, noise ${(100 * mode.stats.relativeNoise).toFixed(2)}%)`,
    ];
    if (twin)
      line.push(
        `without the stage ${ms(twin.stats.median)}: ${(100 * (mode.stats.median / twin.stats.median - 1)).toFixed(1)}%`,
      );
    line.push(`${stage.tasksPerRep} tasks of ${ms(stage.taskMedianMs)} on ${stage.workers} workers`);
    if (mode.analysis)
      line.push(
        `bound ${ms(mode.analysis.bound.ms)} (${mode.analysis.bound.limitedBy}), measured/bound ${(mode.stats.median / mode.analysis.bound.ms).toFixed(3)}`,
      );
    console.log(line.join('; '));
    const rep = result.timeline?.reps.find((r) => r.mode === mode.id);
    if (!rep?.workerTasks?.length) continue;
    const after = rep.ops.filter((o) => o.kind === 'd2h');
    const before = rep.ops.filter((o) => o.kind === 'h2d');
    const gpuEnd = Math.max(...rep.ops.map((o) => o.endMs));
    const lastTask = Math.max(...rep.workerTasks.map((t) => t.endMs));
    if (!result.config?.resolved?.host?.before) {
      const latency = rep.workerTasks.flatMap((t) => {
        const d2h = after.filter((o) => o.chunk === t.chunk);
        return d2h.length ? [t.startMs - Math.max(...d2h.map((o) => o.endMs))] : [];
      });
      console.log(
        `  traced rep: task start after its chunk's D2H median ${ms(quantile(latency, 0.5))}, max ${ms(Math.max(...latency))}; ` +
          `last task ended ${ms(lastTask - gpuEnd)} after the GPU's last op (GPU ${ms(gpuEnd)}, rep ${ms(Math.max(gpuEnd, lastTask))})`,
      );
    } else {
      const late = before.map((o) => {
        const fill = rep.workerTasks.find((t) => t.chunk === o.chunk);
        return fill ? o.startMs - fill.endMs : Number.NaN;
      });
      console.log(
        `  traced rep (loader): H2D start after its fill ended median ${ms(quantile(late, 0.5))}, min ${ms(Math.min(...late))} ` +
          `(negative: a fill drawn after its H2D); first fill ${ms(Math.min(...rep.workerTasks.map((t) => t.startMs)))} to ${ms(Math.min(...rep.workerTasks.map((t) => t.endMs)))}`,
      );
    }
  }
}
