import type { DeviceAnalysis, StepsVerdict } from '../analysis/document.js';
import { summarize } from '../measure/stats.js';
import { NOISE_RULE, type VerdictRule, verdict } from './verdict.js';

// `analyze A B --ab`: two traces of one program, before and after a change. Each device's step times are its
// samples, and `compare`'s rule judges them (the change at least 3 × both sides' noise and 1%, the middle halves
// apart). Devices are paired by rank and device index, else in the order the traces list them.

export function judgeSteps(baseline: readonly DeviceAnalysis[], candidate: readonly DeviceAnalysis[], rule: VerdictRule = NOISE_RULE): StepsVerdict[] {
  const key = (d: DeviceAnalysis) => `${d.rank ?? '-'}/${d.device}`;
  const byKey = new Map(candidate.map((d) => [key(d), d]));
  return baseline.flatMap((a, i): StepsVerdict[] => {
    const b = byKey.get(key(a)) ?? candidate[i];
    if (!b || !a.steps.length || !b.steps.length) return [];
    const before = summarize(a.steps.map((s) => s.ms));
    const after = summarize(b.steps.map((s) => s.ms));
    const judged = verdict(before, after, rule);
    return [
      {
        device: a.device,
        rank: a.rank,
        baselineFile: a.file,
        candidateFile: b.file,
        baselineMs: before.median,
        candidateMs: after.median,
        steps: [a.steps.length, b.steps.length],
        change: judged.change,
        verdict: judged.verdict,
      },
    ];
  });
}
