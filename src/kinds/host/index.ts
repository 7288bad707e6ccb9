import type { StageKind } from '../api/index.js';
import type { HostOp } from './op.js';
import { hostSection } from './config.js';
import { cpuStageTerm } from './cpu-stage.js';
import { cpuStageWords, hostModeLine } from './report.js';
import { type CpuStageTiming, cpuStageSummary, HOST_MODE_FIELDS } from './section.js';
import { checkStageModules } from './workers/modules.js';

const what = (op: HostOp) => `host function ${op.name}`;

export const host: StageKind<'host', HostOp> = {
  id: 'host',
  opKind: 'host',
  // After the chunk's D2H copies, over the bytes they wrote.
  phase: 'store',
  plan: (w) => (w.host === null ? [] : [{ kind: 'host', stream: w.stream, name: w.host, chunk: w.chunk }]),
  moves: () => null,
  owns: () => true,
  touchesDevice: false,
  cupti: null,
  // The CPU stage's term is the workers', not an engine of the GPU's.
  term: { bound: cpuStageTerm, measured: cpuStageWords },
  // Its records of a mode's reps are rep.ts's, each a rep's CPU stage on workers.
  reps: {
    fields: HOST_MODE_FIELDS,
    summary: (records) => ({ cpuStage: cpuStageSummary(records as readonly CpuStageTiming[]) }),
  },
  modeLine: hostModeLine,
  section: hostSection,
  verify: 'exact',
  writes: () => [],
  names: () => [],
  look: {
    letter: 'C',
    colour: '#7a7a7a',
    name: 'host (CPU)',
    prefix: 'host',
    always: true,
    rate: true,
    noun: { one: 'host function', many: 'host functions', always: false },
    terminal: { background: 'bgGray', foreground: 'black' },
    engine: { row: 4000, name: 'host ops', hostCopy: false, exclusive: false },
  },
  what,
  describe: (op, c) => `${what(op)}${op.chunk === null ? '' : `, ${c.chunk(op.chunk)}`}`,
  timeline: () => ({ buffer: null, kernel: null, bytes: 0 }),
  subject: (op) => op.buffer,
  // Its worker pool, the hand-over and a loader's ring: imported only for a plan with host ops.
  // A dry run starts no worker, so the modules a run's pool would load are checked here.
  preflight: (plan) => {
    if (plan.host?.thread === 'workers') checkStageModules({ before: plan.host.before, after: plan.host.after });
  },
  runtime: async () => (await import('./runtime.js')).runtime,
};
