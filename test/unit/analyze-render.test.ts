import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { analyzeTraces } from '../../src/analysis/analyze.js';
import type { AnalysisDocument } from '../../src/analysis/document.js';
import type { ParsedTrace } from '../../src/traces/events.js';
import { parseTraceDocument, parseTraceFile } from '../../src/traces/parse.js';
import { packageRoot } from '../../src/paths.js';
import { renderAnalysis } from '../../src/report/analyze.js';
import { renderAnalysisHtml } from '../../src/report/analyze-html.js';
import { renderAnalysisMarkdown } from '../../src/report/analyze-md.js';
import { buildAnalysisTrace } from '../../src/report/analyze-trace.js';
import { inLanes } from '../../src/report/trace.js';
import { overlong } from '../helpers/width.js';

// analyze's renderers as pure functions: the text at 80 and 100 columns and the Markdown within 100, from the
// traces recorded on an H100 (test/fixtures/analyze/torch-h100); the page and the Chrome trace from traces built in
// code, whose contents are counted by hand.

const recorded = (name: string) =>
  parseTraceFile(join(packageRoot(), 'test', 'fixtures', 'analyze', 'torch-h100', name));
const analyse = (traces: readonly ParsedTrace[]): AnalysisDocument =>
  analyzeTraces(traces, { rates: null, toolVersion: 'test' });

type Args = Record<string, number | string>;
const event = (cat: string, name: string, ts: number, dur: number, args: Args = {}) => ({
  ph: 'X',
  cat,
  name,
  pid: 0,
  tid: 1,
  ts,
  dur,
  args,
});

/**
 * Two ranks, three steps of 1000 µs, a gemm (stream 7) and an all-reduce (stream 20) a step; rank 1's all-reduce
 * 200 µs late in steps 0 and 1. Rank 0 has two launches that overlap on the host (two threads).
 */
function twoRanks(): ParsedTrace[] {
  return [0, 1].map((rank) =>
    parseTraceDocument(`rank${rank}.json`, {
      schemaVersion: 1,
      distributedInfo: { rank, world_size: 2 },
      traceEvents: [
        ...[0, 1, 2].flatMap((i) => [
          event('gpu_user_annotation', `ProfilerStep#${i}`, i * 1000, 1000, { device: rank }),
          event('kernel', 'gemm', i * 1000, 400, { device: rank, stream: 7 }),
          event('kernel', 'ncclDevKernel_AllReduce', i * 1000 + 500 + (rank === 1 && i < 2 ? 200 : 0), 300, {
            device: rank,
            stream: 20,
          }),
        ]),
        ...(rank === 0
          ? [
              event('cuda_runtime', 'cudaLaunchKernel', -100, 50, { correlation: 1 }),
              event('cuda_runtime', 'cudaStreamSynchronize', -80, 60, { correlation: 2 }),
            ]
          : []),
      ],
    }),
  );
}

describe('analyze text and Markdown fit their width', async () => {
  const document = analyse(await Promise.all(['serial.pt.trace.json.gz', 'sync.pt.trace.json.gz'].map(recorded)));

  for (const columns of [80, 100]) {
    it(`the text at ${columns} columns has no line wider than ${columns}, and each step is one row`, () => {
      const text = renderAnalysis(document, columns);
      assert.deepEqual(overlong(text, columns), []);
      // 4 profiled steps in each of the two traces, one line each: a step row is never wrapped.
      assert.equal(text.split('\n').filter((line) => /^ {2}ProfilerStep#\d/.test(line)).length, 8);
    });
  }

  it('drops the communication columns at 80 columns where no device communicates, and keeps all at 100', () => {
    assert.doesNotMatch(renderAnalysis(document, 80), /comm∥c/);
    assert.match(renderAnalysis(document, 100), /copy∥k comm∥c exp copy exp comm/);
  });

  it('the answer of each device leads with its step, overlap, exposed time, idle by cause and top finding', () => {
    const text = renderAnalysis(document, 100);
    assert.match(
      text,
      /\n {2}idle [\d.]+ (ms|µs): host wait [\d.]+ (ms|µs) · kernel wait [\d.]+ (ms|µs) · sync wait [\d.]+ (ms|µs) · other /,
    );
  });

  it('the Markdown has no line wider than 100 columns and a table row per step', () => {
    const markdown = renderAnalysisMarkdown(document);
    assert.deepEqual(overlong(markdown, 100), []);
    assert.equal(markdown.split('\n').filter((line) => line.startsWith('| ProfilerStep#')).length, 8);
    assert.match(markdown, /^#### GPU 0 · serial\.pt\.trace\.json\.gz$/m);
  });
});

describe("docs/analyze.md's example", () => {
  it('is the text analyze prints for host-sync.json at 100 columns', () => {
    const name = 'test/fixtures/analyze/host-sync.json';
    const trace = parseTraceDocument(
      name,
      JSON.parse(readFileSync(join(packageRoot(), name), 'utf8')) as Record<string, unknown>,
    );
    const page = readFileSync(join(packageRoot(), 'docs', 'analyze.md'), 'utf8');
    const start = page.indexOf('```\n', page.indexOf(`On \`${name}\``)) + 4;
    const example = page.slice(start, page.indexOf('```\n', start));
    assert.equal(example, renderAnalysis(analyse([trace]), 100));
  });
});

describe('analyze renderers of several ranks', () => {
  const traces = twoRanks();
  const document = analyse(traces);

  it('the text names rank 1 as the last to arrive, 2 of 3, with the skew', () => {
    const text = renderAnalysis(document, 100);
    assert.match(text, /Collectives across 2 GPUs: 3 collectives paired, arrival skew median 0\.200 ms, max 0\.200 ms/);
    assert.match(text, /last to arrive most often: rank 1 · GPU 1, at 2 of 3 collectives/);
    assert.match(text, /rank 1 · GPU 1: last at 2 of 3 \(67%\), late by 0\.200 ms median, 0\.200 ms max/);
  });

  it('Markdown escapes a pipe in a step name, so the row keeps its cells', () => {
    const piped = {
      ...document,
      devices: document.devices.map((d) => ({ ...d, steps: d.steps.map((s) => ({ ...s, name: 'a|b' })) })),
    };
    const rows = renderAnalysisMarkdown(piped)
      .split('\n')
      .filter((line) => line.startsWith('| a'));
    assert.equal(rows.length, 6);
    // 12 cells a row, the escaped pipe not among the separators.
    assert.equal(rows[0]!.split(/(?<!\\)\|/).length - 2, 12);
  });

  it('the page escapes markup in names and holds every step, more than the 12 the terminal shows', () => {
    const many = {
      ...document,
      devices: [
        {
          ...document.devices[0]!,
          file: '<script>x</script>.json',
          steps: Array.from({ length: 20 }, () => document.devices[0]!.steps[0]!),
        },
      ],
    };
    const html = renderAnalysisHtml(many);
    assert.doesNotMatch(html, /<script>/);
    assert.match(html, /&lt;script&gt;x&lt;\/script&gt;\.json/);
    assert.equal(html.split('<tr><td>ProfilerStep#0</td>').length - 1, 20);
    assert.match(html, /Content-Security-Policy" content="default-src 'none'/);
  });

  it('the Chrome trace holds per device its steps, findings and streams, the host calls in lanes, and each late collective', () => {
    const trace = buildAnalysisTrace(document, traces);
    const of = (ph: string, cat?: string) =>
      trace.traceEvents.filter((e) => e.ph === ph && (cat === undefined || e.cat === cat));
    // 3 steps × 2 devices; 3 gemms × 2 and 3 all-reduces × 2; rank 0's launch and synchronize.
    assert.equal(of('X', 'step').length, 6);
    assert.equal(of('X', 'kernel').length, 6);
    assert.equal(of('X', 'communication').length, 6);
    assert.equal(of('X', 'launch').length + of('X', 'sync').length, 2);
    // Two collectives had a last (rank 1, pid 2), the third was a tie.
    assert.deepEqual(
      // Skew to the nanosecond: 0.7 − 0.5 is not 0.2 in binary.
      of('i', 'collective').map((e) => [e.pid, e.ts, Math.round(Number(e.args?.skewMs) * 1e6) / 1e6]),
      [
        [2, 700, 0.2],
        [2, 1700, 0.2],
      ],
    );
    const names = of('M').map((e) => `${e.pid}/${e.tid} ${e.args?.name}`);
    // The launch (−100 to −50 µs) and the synchronize (−80 to −20) overlap: two host tracks.
    assert.ok(names.includes('3/1 CUDA calls') && names.includes('3/2 CUDA calls (2)'), names.join('; '));
    assert.ok(
      names.includes('1/0 rank 0 · GPU 0 (rank0.json)') &&
        names.includes('1/10 stream 7') &&
        names.includes('1/11 stream 20'),
      names.join('; '),
    );
    assert.equal(trace.traceEvents.filter((e) => e.ph === 'X' && e.dur !== undefined && e.dur < 0).length, 0);
  });

  it('lays overlapping spans in lanes and keeps spans that follow each other in one', () => {
    const lanes = inLanes(
      [
        { start: 0, end: 2 },
        { start: 1, end: 3 },
        { start: 2, end: 4 },
        { start: 3, end: 5 },
      ],
      (s) => s,
    );
    assert.deepEqual(
      lanes.map((lane) => lane.map((s) => s.start)),
      [
        [0, 2],
        [1, 3],
      ],
    );
  });
});

const CHROMIUM = '/usr/bin/chromium';
// As timeline-browser.test.ts: skipped where Chromium is missing, except in CI, where that must fail.
const skip =
  existsSync(CHROMIUM) || process.env.CI ? false : `${CHROMIUM} is missing (apt-get install chromium; .ci/run does)`;

describe('the analyze page in headless Chromium', { skip }, () => {
  it('renders every step row and the findings, fetching nothing and logging no error', {
    timeout: 60_000,
  }, async () => {
    const document = analyse([await recorded('sync.pt.trace.json.gz')]);
    const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-analyze-html-'));
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      headless: true,
    });
    try {
      const page = await browser.newPage();
      const requests: string[] = [];
      const problems: string[] = [];
      page.on('request', (request) => requests.push(request.url()));
      page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
      });
      const path = join(dir, 'analyze.html');
      writeFileSync(path, renderAnalysisHtml(document));
      const url = pathToFileURL(path).href;
      await page.goto(url, { waitUntil: 'load' });
      assert.equal(await page.locator('tbody tr').count(), 4);
      assert.equal(await page.locator('p.finding').count(), document.findings.length);
      assert.match((await page.locator('h1').textContent()) ?? '', /cuda-pipe analyze: 1 trace, 1 device/);
      assert.deepEqual(requests, [url]);
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
