import { runAb } from '../api/ab.js';
import { cliIo } from './io.js';
import { isRegression, pairedRule } from '../compare/rule.js';
import { loadConfigFile } from '../config/load.js';
import type { Overrides } from '../config/types.js';
import type { ExitCode } from '../errors.js';
import type { WaitStrategy } from '../exec/wait.js';
import { renderAbMarkdown, renderAbTable } from '../report/ab.js';
import { makeStyle } from '../report/style.js';
import { fitLines, outputColumns } from '../report/width.js';
import { withInterrupts } from './interrupt.js';
import { abSuite } from '../report/verdict-rows.js';
import { type VerdictTargets, verdictDocuments } from './verdict-outputs.js';
import { checkDocuments, writeDocuments } from './write-file.js';

export interface AbFlags extends Pick<Overrides, 'streams' | 'chunks' | 'order' | 'device' | 'warmup'>, VerdictTargets {
  verify: boolean;
  gate?: boolean;
  wait: WaitStrategy;
  timeout?: number;
  maxTime: number;
  minPairs: number;
  threshold?: number;
  json?: string;
  md?: string;
}

/** Exit codes are compare's: 1 when a mode a user acts on is slower (or either side failed verification), else 0. */
export async function abCommand(pathA: string, pathB: string, flags: AbFlags): Promise<ExitCode> {
  const overrides: Overrides = {
    streams: flags.streams,
    chunks: flags.chunks,
    order: flags.order,
    device: flags.device,
    warmup: flags.warmup,
  };
  const [a, b] = [loadConfigFile(pathA, overrides), loadConfigFile(pathB, overrides)];
  // Before the GPU is opened: a clash found after minutes of measuring would throw the measurement away.
  checkDocuments([
    { flag: 'json', target: flags.json },
    { flag: 'md', target: flags.md },
    ...verdictDocuments(() => [], flags),
  ]);
  const result = await withInterrupts((signal) =>
    runAb(a, b, {
      verify: flags.verify,
      gate: flags.gate ?? false,
      wait: flags.wait,
      signal,
      timeoutMs: flags.timeout === undefined ? undefined : flags.timeout * 1000,
      maxTimeMs: flags.maxTime * 1000,
      minPairs: flags.minPairs,
      rule: pairedRule(flags.threshold === undefined ? undefined : flags.threshold / 100),
      onMeasuring: () =>
        cliIo().stderr.write(
          `measuring ${a.config.name} against ${b.config.name}, interleaved (Ctrl-C stops after the current rep)\n`,
        ),
    }),
  );
  const out = await writeDocuments([
    { flag: 'json', target: flags.json, render: () => JSON.stringify(result, null, 2) + '\n' },
    { flag: 'md', target: flags.md, render: () => renderAbMarkdown(result) + '\n' },
    ...verdictDocuments(() => [abSuite(result)], flags),
  ]);
  const columns = outputColumns(out);
  out.write(fitLines(renderAbTable(result, makeStyle(out), columns), columns) + '\n');
  const failed = [result.a, result.b].some((side) => side.verification.status === 'failed');
  return failed || (result.verdict !== undefined && isRegression(result.verdict)) ? 1 : 0;
}
