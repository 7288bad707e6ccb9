import type { DeviceAnalysis, StepsVerdict } from '../analysis/document.js';
import { median } from '../quantile.js';
import { asRange, type OverallVerdict, overallVerdict, separateRunsRule, type VerdictRule } from './rule.js';
import { verdict } from './verdict.js';

// `analyze A B --ab`: two traces of one program, before and after a change. Each device's step times are its
// samples of two separate runs, judged by the one rule (rule.ts) as `compare` judges two Results. Devices are
// paired by rank and device index, else in the order the traces list them.

export interface JudgedSteps {
  readonly verdicts: StepsVerdict[];
  /** Every device's verdict in one (rule.ts' `overallVerdict`: each device gates). */
  readonly verdict: OverallVerdict;
  readonly verdictRule: VerdictRule;
}

export function judgeSteps(
  baseline: readonly DeviceAnalysis[],
  candidate: readonly DeviceAnalysis[],
  rule: VerdictRule = separateRunsRule(),
): JudgedSteps {
  const key = (d: DeviceAnalysis) => `${d.rank ?? '-'}/${d.device}`;
  const byKey = new Map(candidate.map((d) => [key(d), d]));
  const verdicts = baseline.flatMap((a, i): StepsVerdict[] => {
    const b = byKey.get(key(a)) ?? candidate[i];
    if (!b || !a.steps.length || !b.steps.length) return [];
    const [before, after] = [a.steps.map((s) => s.ms), b.steps.map((s) => s.ms)];
    const [baselineMs, candidateMs] = [median(before), median(after)];
    const judged = verdict(before, after, rule);
    return [
      {
        device: a.device,
        rank: a.rank,
        baselineFile: a.file,
        candidateFile: b.file,
        baselineMs,
        candidateMs,
        steps: [a.steps.length, b.steps.length],
        change: (candidateMs - baselineMs) / baselineMs,
        interval: judged.measured.interval && asRange(judged.measured.interval),
        verdict: judged.verdict,
        reason: judged.reason,
      },
    ];
  });
  return { verdicts, verdict: overallVerdict(verdicts.map((v) => v.verdict)), verdictRule: rule };
}
