#!/usr/bin/env node
// Renders a page of cuda-pipe's (an --html report) to a PNG in headless Chromium, for the pictures under docs/.
// Usage: node scripts/screenshot.mjs report.html out.png [width]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const [page, png, width = '1280'] = process.argv.slice(2);
if (!page || !png) {
  process.stderr.write('usage: node scripts/screenshot.mjs report.html out.png [width]\n');
  process.exit(2);
}
const profile = mkdtempSync(join(tmpdir(), 'cuda-pipe-shot-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  viewport: { width: Number(width), height: 900 },
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
try {
  const tab = await context.newPage();
  await tab.goto(pathToFileURL(resolve(page)).href);
  await tab.screenshot({ path: png, fullPage: true });
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
