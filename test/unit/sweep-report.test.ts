import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { renderHtml } from '../../src/report/html.js';
import { loadResults } from '../../src/result/load.js';
import { runCli } from '../helpers/cli.js';

// A saved sweep read back with `report`: what the sweep printed (heat map, best layout, ties, YAML), not the race's
// dozens of modes and a bound paragraph for each layout.

const FIXTURE = join('test', 'fixtures', 'h200-sweep-balanced.json');
const [sweep] = loadResults(FIXTURE);
const out = mkdtempSync(join(tmpdir(), 'cuda-pipe-sweep-report-'));
after(() => rmSync(out, { recursive: true, force: true }));

describe('report of a saved sweep', () => {
  it('prints the heat map, the best layout with its ties and the YAML, and not the mode table or the bound paragraphs', () => {
    const { code, stdout, stderr } = runCli(['report', FIXTURE]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /depth-first: streams \\ chunks/);
    assert.match(stdout, /│ 8 +│ – +│ – +│ – +│ 1\.96×· │ 2\.11×· │ 2\.14× +│ 2\.09×· │/);
    assert.match(stdout, /best: 32 chunks × 8 streams, depth-first: 5\.871 ms/);
    assert.match(stdout, /ties within noise: overlapped 32×4 depth-first \(5\.893 ms\)/);
    assert.match(stdout, /to reproduce it:\n {2}pipeline:\n {4}chunks: 32\n {4}streams: 8\n {4}order: depth-first/);
    assert.doesNotMatch(stdout, /small launches back to back|kernels chunked|speedup over serial \(overlapped/);
    assert.ok(stdout.split('\n').length < 30, `${stdout.split('\n').length} lines`);
  });

  it('writes the sweep chart for --svg and the heat map for --md', () => {
    const svg = join(out, 'sweep.svg');
    const md = join(out, 'sweep.md');
    const { code, stderr } = runCli(['report', FIXTURE, '--svg', svg, '--md', md]);
    assert.equal(code, 0, stderr);
    const chart = readFileSync(svg, 'utf8');
    assert.match(chart, /balanced: speedup over serial by chunk count/);
    // One line per stream count (1, 2, 4, 8), one point per layout measured.
    assert.equal(chart.match(/<polyline /g)?.length, 4);
    assert.equal(chart.match(/<circle /g)?.length, sweep?.sweep?.points.length);
    assert.match(readFileSync(md, 'utf8'), /\| 8 \| – \| – \| – \| 1\.96× \| 2\.11× \| \*\*2\.14×\*\* \| 2\.09× \|/);
  });

  it('keeps the run views for a result that is not a sweep', () => {
    const { code, stdout, stderr } = runCli(['report', join('test', 'fixtures', 'h200-balanced-16-traced.json')]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /│ mode +│ +median/);
    assert.doesNotMatch(stdout, /streams \\ chunks/);
  });
});

describe('the HTML report of a sweep', () => {
  assert.ok(sweep);
  const html = renderHtml(sweep);

  it('opens with the heat map, the chart and the best layout, then the timeline, and folds the raw modes at the end', () => {
    const at = (marker: string) => {
      const i = html.indexOf(marker);
      assert.ok(i >= 0, `no ${marker}`);
      return i;
    };
    const order = [
      '<section id="sweep">',
      '<section id="sweep-chart">',
      '<section id="sweep-best">',
      '<section id="timeline">',
      '<details id="raw-modes">',
    ].map(at);
    assert.deepEqual(
      order,
      [...order].sort((a, b) => a - b),
    );
    const folded = html.slice(at('<details id="raw-modes">'));
    assert.ok(folded.includes('<section id="modes">') && folded.includes('<section id="overlap">'));
    assert.equal(html.match(/<section id="modes">/g)?.length, 1);
    assert.match(html, /<pre class="yaml">pipeline:\n {2}chunks: 32\n {2}streams: 8\n {2}order: depth-first<\/pre>/);
    assert.match(html, /ties within noise: overlapped 32×4 depth-first \(5\.893 ms\)/);
  });
});

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
// As in timeline-browser.test.ts: skipped where Chromium is missing, except in CI, where that must fail.
const skip =
  existsSync(CHROMIUM) || process.env.CI ? false : `${CHROMIUM} is missing (apt-get install chromium; .ci/run does)`;

describe('the HTML report of a sweep in headless Chromium', { skip }, () => {
  let context: BrowserContext;
  let page: Page;
  let dir: string;
  const VIEWPORT = { width: 1100, height: 900 };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-sweep-browser-'));
    context = await chromium.launchPersistentContext(join(dir, 'profile'), {
      executablePath: CHROMIUM,
      args: ARGS,
      headless: true,
      viewport: VIEWPORT,
    });
    page = await context.newPage();
  });

  after(async () => {
    await context?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows the heat map and the chart on the first screen, and the modes only once unfolded', async () => {
    assert.ok(sweep);
    const path = join(dir, 'sweep.html');
    writeFileSync(path, renderHtml(sweep));
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.goto(pathToFileURL(path).href, { waitUntil: 'load' });
    for (const selector of ['table.heatmap', '#sweep-chart svg']) {
      const box = await page.locator(selector).boundingBox();
      assert.ok(
        box && box.height > 100 && box.y + box.height <= VIEWPORT.height,
        `${selector}: ${JSON.stringify(box)}`,
      );
    }
    assert.equal(await page.locator('table.modes').isVisible(), false);
    await page.locator('details#raw-modes > summary').click();
    assert.equal(await page.locator('table.modes').isVisible(), true);
    assert.equal(await page.locator('table.modes tbody tr').count(), sweep.modes.length);
    assert.deepEqual(requests, [pathToFileURL(path).href]);
  });

  it("draws every word of the inference sweep's pictures inside them: the timeline's legend wraps rather than running off the edge", async () => {
    // The H200 inference sweep's best layout was traced through CUPTI with every stage, so its legend has 7 items.
    const [inference] = loadResults(
      join('docs', 'measurements', '2026-11-24-h200-final', 'pipelines', 'inference-sweep.json'),
    );
    assert.ok(inference);
    const path = join(dir, 'inference.html');
    writeFileSync(path, renderHtml(inference));
    await page.goto(pathToFileURL(path).href, { waitUntil: 'load' });
    const outside = await page.evaluate(`[...document.querySelectorAll('svg')].flatMap((svg) => {
      const box = svg.getBoundingClientRect();
      return [...svg.querySelectorAll('text')].map((t) => [t.textContent, t.getBoundingClientRect()])
        .filter(([, r]) => r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
        .map(([words]) => words);
    })`);
    assert.deepEqual(outside, []);
    assert.equal(await page.locator('rect.legend.queued').count(), 1);
  });
});
