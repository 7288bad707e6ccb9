import type { Verdict } from '../../compare/rule.js';
import { escapeControl, formatMs, formatPercent } from '../../format.js';
import { escapeXml } from '../timeline-common.js';
import type { VerdictRow, VerdictSuite } from '../verdict-rows.js';
import { csvField } from './csv.js';

// The verdicts of `compare` and `ab` (and so of the perf gate, which runs them) in the formats CI reads: CSV for a
// spreadsheet, Bencher Metric Format and github-action-benchmark's array for a dashboard, JUnit XML for the test
// reports of GitLab, Jenkins, Buildkite and GitHub. Each renders any number of suites (the gate's configs).

const NS_PER_MS = 1e6;
const signed = (fraction: number) => `${fraction >= 0 ? '+' : ''}${(fraction * 100).toFixed(2)}%`;

/** "B/A +0.95% (90% interval +0.74% to +1.04%)": the change the verdict read. */
function changeWords(row: VerdictRow, confidence: number): string {
  if (row.low === null || row.high === null) return `B/A ${signed(row.change)} (no interval)`;
  return `B/A ${signed(row.change)} (${formatPercent(confidence, 0)} interval ${signed(row.low)} to ${signed(row.high)})`;
}

/** One row per judged mode: both sides' medians, the change with its interval, the verdict and why. */
export function renderVerdictCsv(suites: readonly VerdictSuite[]): string {
  const head = [
    'command',
    'config',
    'device',
    'mode',
    'label',
    'gating',
    'a_median_ms',
    'b_median_ms',
    'a_n',
    'b_n',
    'change',
    'change_low',
    'change_high',
    'band',
    'verdict',
    'reason',
  ];
  const fields = (suite: VerdictSuite, r: VerdictRow) => [
    ...[suite.command, r.config, r.device, r.mode, r.label, r.gating ? 'yes' : 'no'],
    ...[r.a.median, r.b.median, r.a.n, r.b.n, r.change, r.low, r.high, r.band, r.verdict, r.reason],
  ];
  const rows = suites.flatMap((suite) => suite.rows.map((r) => fields(suite, r).map(csvField).join(',')));
  return [head.join(','), ...rows].join('\n');
}

/**
 * Bencher Metric Format: each mode's `latency` is B's median in ns with its quartiles, as `run --bmf` writes a run's,
 * so that a chart goes on from run to run; `b-over-a` is the ratio the verdict read with its interval (Bencher makes
 * the measure on first sight), on which a threshold can alert.
 */
export function renderVerdictBmf(suites: readonly VerdictSuite[]): string {
  const document: Record<string, Record<string, { value: number; lower_value?: number; upper_value?: number }>> = {};
  for (const row of suites.flatMap((s) => s.rows)) {
    const interval =
      row.low !== null && row.high !== null ? { lower_value: 1 + row.low, upper_value: 1 + row.high } : {};
    document[row.name] = {
      latency: {
        value: row.b.median * NS_PER_MS,
        lower_value: row.b.q1 * NS_PER_MS,
        upper_value: row.b.q3 * NS_PER_MS,
      },
      'b-over-a': { value: 1 + row.change, ...interval },
    };
  }
  return JSON.stringify(document, null, 2);
}

/**
 * github-action-benchmark's `customSmallerIsBetter` entries: B's median in ms, the verdict and the change in `extra`.
 */
export function renderVerdictGab(suites: readonly VerdictSuite[]): string {
  const entries = suites.flatMap((suite) =>
    suite.rows.map((r) => ({
      name: r.name,
      unit: 'ms',
      value: r.b.median,
      range: `±${((r.b.q3 - r.b.q1) / 2).toPrecision(3)}`,
      extra: `${r.label}: ${r.verdict}${r.gating ? '' : ' (info)'}, ${changeWords(r, suite.confidence)} against A ${formatMs(r.a.median)}`,
    })),
  );
  return JSON.stringify(entries, null, 2);
}

const xml = (text: string) => escapeXml(escapeControl(text));
const attributes = (pairs: Record<string, string | number | null>) =>
  Object.entries(pairs)
    .filter((entry): entry is [string, string | number] => entry[1] !== null)
    .map(([name, value]) => ` ${name}="${xml(String(value))}"`)
    .join('');

/** What a test case holds besides its name: a failure for `slower`, a skip for `noisy` (undecided), else its reason. */
function caseBody(row: VerdictRow, suite: VerdictSuite): string {
  const message = `${row.verdict}: ${changeWords(row, suite.confidence)}`;
  const sides = `A ${formatMs(row.a.median)} (${row.a.n} reps), B ${formatMs(row.b.median)} (${row.b.n} reps)`;
  const detail = `${sides}. ${row.reason}`;
  const undecided = `${message}: neither a change nor its absence shown; take more reps`;
  const bodies: Record<Verdict, string> = {
    slower: `      <failure${attributes({ type: 'slower', message })}>${xml(detail)}</failure>\n`,
    noisy: `      <skipped${attributes({ message: undecided })}/>\n`,
    faster: `      <system-out>${xml(`${message}. ${detail}`)}</system-out>\n`,
    same: `      <system-out>${xml(`${message}. ${detail}`)}</system-out>\n`,
  };
  return bodies[row.verdict];
}

/**
 * JUnit XML: a test suite per comparison, a test case per gated mode (the modes a user acts on; the model's parts
 * are not gated), failed where the mode is `slower` with the change and its interval as the failure's text, skipped
 * where `noisy`. GitLab's `artifacts:reports:junit`, Jenkins' junit step and GitHub's test reporters read it.
 */
export function renderJUnit(suites: readonly VerdictSuite[]): string {
  const counted = suites.map((suite) => {
    const rows = suite.rows.filter((r) => r.gating);
    const count = (verdict: Verdict) => rows.filter((r) => r.verdict === verdict).length;
    return { suite, rows, failures: count('slower'), skipped: count('noisy') };
  });
  const total = (key: 'failures' | 'skipped') => counted.reduce((sum, c) => sum + c[key], 0);
  const seconds = (ms: number | null) => (ms === null ? null : (ms / 1000).toFixed(3));
  const tests = counted.reduce((sum, c) => sum + c.rows.length, 0);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attributes({ name: 'cuda-pipe', tests, failures: total('failures'), skipped: total('skipped') })}>`,
  ];
  for (const { suite, rows, failures, skipped } of counted) {
    // The suite's time where every case has one: the A/B document's measuring time per mode.
    const timed = rows.length > 0 && rows.every((r) => r.elapsedMs !== null);
    const time = timed ? seconds(rows.reduce((sum, r) => sum + (r.elapsedMs ?? 0), 0)) : null;
    const head = {
      name: suite.title,
      tests: rows.length,
      failures,
      errors: 0,
      skipped,
      timestamp: suite.createdAt,
      time,
    };
    lines.push(
      `  <testsuite${attributes(head)}>`,
      `    <properties><property${attributes({ name: 'verdict', value: suite.verdict })}/></properties>`,
    );
    for (const row of rows) {
      const testcase = attributes({ classname: row.config, name: row.label, time: seconds(row.elapsedMs) });
      lines.push(`    <testcase${testcase}>\n${caseBody(row, suite)}    </testcase>`);
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return lines.join('\n');
}
