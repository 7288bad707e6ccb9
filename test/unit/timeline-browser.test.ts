import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { renderHtml } from '../../src/report/html.js';
import { renderSvg, type SvgPanel, svgLayout } from '../../src/report/svg.js';
import { type Stage, STAGE_COLOURS, STAGES } from '../../src/report/timeline-common.js';
import type { RunResult } from '../../src/result/schema.js';
import { timelineFixtures } from '../helpers/timeline-fixtures.js';

// The pictures as a browser draws them: each stage's colour must show up in the row of every stream that ran it,
// and nowhere a stream did not run it; and opening the report must not make a single network request.

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
// Skipped where Chromium is missing, except in CI (CI set), where a missing browser must fail rather than pass quietly.
const skip =
  existsSync(CHROMIUM) || process.env.CI ? false : `${CHROMIUM} is missing (apt-get install chromium; .ci/run does)`;

interface Picture {
  readonly width: number;
  readonly height: number;
  readonly data: Buffer;
}

function rgb(hex: string): [number, number, number] {
  return [
    Number.parseInt(hex.slice(1, 3), 16),
    Number.parseInt(hex.slice(3, 5), 16),
    Number.parseInt(hex.slice(5, 7), 16),
  ];
}

/** Pixels of `colour` (within a little rounding) in a box of the picture whose origin sits at (dx, dy) in SVG px. */
function countColour(
  picture: Picture,
  colour: string,
  box: { left: number; right: number; top: number; bottom: number },
): number {
  const [r, g, b] = rgb(colour);
  let n = 0;
  for (let y = Math.max(0, Math.ceil(box.top)); y < Math.min(picture.height, Math.floor(box.bottom)); y += 1) {
    for (let x = Math.max(0, Math.ceil(box.left)); x < Math.min(picture.width, Math.floor(box.right)); x += 1) {
      const i = (y * picture.width + x) * 4;
      if (
        Math.abs(picture.data[i]! - r) <= 2 &&
        Math.abs(picture.data[i + 1]! - g) <= 2 &&
        Math.abs(picture.data[i + 2]! - b) <= 2
      )
        n += 1;
    }
  }
  return n;
}

/** Each row's band must hold plenty of the colour of every stage its stream ran, and none of the others. */
function assertRowsShowTheirStages(picture: Picture, panels: readonly SvgPanel[]): void {
  for (const panel of panels) {
    for (const row of panel.rows) {
      // Inset the band by a pixel so antialiased edges of the next row cannot count.
      const box = { left: panel.plotLeft, right: panel.plotRight, top: row.top + 1, bottom: row.bottom - 1 };
      const ran = new Set<Stage>(row.ops.map((op) => op.kind));
      for (const stage of STAGES) {
        const pixels = countColour(picture, STAGE_COLOURS[stage], box);
        const where = `${panel.group.mode} ${row.label} ${stage}`;
        if (ran.has(stage)) assert.ok(pixels >= 50, `${where}: only ${pixels} px`);
        else assert.equal(pixels, 0, where);
      }
    }
  }
}

function decode(png: Buffer): Picture {
  return PNG.sync.read(png);
}

describe('timeline pictures in headless Chromium', { skip }, () => {
  let context: BrowserContext;
  let page: Page;
  let dir: string;
  const requests: string[] = [];
  const problems: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-browser-'));
    context = await chromium.launchPersistentContext(join(dir, 'profile'), {
      executablePath: CHROMIUM,
      args: ARGS,
      headless: true,
      viewport: { width: 1100, height: 900 },
      deviceScaleFactor: 1,
    });
    page = await context.newPage();
    page.on('request', (request) => requests.push(request.url()));
    // A fetch the page's CSP blocked fires no request event, only a console error, so count those too.
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
  });

  after(async () => {
    await context?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function open(file: string, content: string): Promise<string> {
    const path = join(dir, file);
    writeFileSync(path, content);
    const url = pathToFileURL(path).href;
    requests.length = 0;
    problems.length = 0;
    await page.goto(url, { waitUntil: 'load' });
    return url;
  }

  for (const { name, result } of timelineFixtures()) {
    describe(name, () => {
      it('draws each stage’s colour in the HTML report’s row of every stream that ran it, fetching nothing', async () => {
        const url = await open('report.html', renderHtml(result));
        for (const mode of modes(result)) {
          const layout = svgLayout(result, { mode });
          const svg = page.locator(`figure.timeline[data-mode="${mode}"] svg`);
          const box = await svg.boundingBox();
          // Drawn at its own size, so layout px are screenshot px.
          assert.deepEqual([box?.width, box?.height], [layout.width, layout.height]);
          assertRowsShowTheirStages(decode(await svg.screenshot()), layout.panels);
        }
        assert.deepEqual(requests, [url]);
        assert.deepEqual(problems, []);
      });

      it('draws the standalone SVG the same way, wrapped in a page', async () => {
        const page_ = `<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0">${renderSvg(result)}</body></html>`;
        const url = await open('timeline.html', page_);
        assertRowsShowTheirStages(decode(await page.screenshot({ fullPage: true })), svgLayout(result).panels);
        assert.deepEqual(requests, [url]);
        assert.deepEqual(problems, []);
      });

      it('serves the SVG as well-formed XML on its own', async () => {
        await open('timeline.svg', renderSvg(result));
        // A string, as the test compiles without the DOM's types. An XML parse error replaces the document's root.
        assert.equal(await page.evaluate('document.documentElement.tagName'), 'svg');
        assert.equal(await page.locator('parsererror').count(), 0);
      });
    });
  }
});

function modes(result: RunResult): string[] {
  return [...new Set((result.timeline?.reps ?? []).map((r) => r.mode))];
}
