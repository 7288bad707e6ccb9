import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { packageRoot } from '../../src/paths.js';

// Figures the README quotes, each next to the committed log it comes from: issue 26 found some that no log held or
// that an older run had given. A figure changed in one place and not the other fails here.

const root = packageRoot();
const readme = readFileSync(join(root, 'README.md'), 'utf8').replace(/\s+/g, ' ');
const log = (path: string) => readFileSync(join(root, 'docs', 'measurements', path), 'utf8');

const SOURCED: readonly { readonly readme: string; readonly log: string; readonly holds: readonly string[] }[] = [
  {
    readme: '1.01 to 1.14× (H2D) and 1.00 to 1.17× (D2H) of the copy alone one way',
    log: '2026-11-23-h200-issues15-16/suite/cupti-vs-alone.txt',
    holds: ['CUPTI engine / alone:            min 1.013 median 1.084 max 1.138', 'CUPTI engine / alone:            min 1.000 median 1.146 max 1.170'],
  },
  {
    readme: 'tasks start a median 1.006 ms (max 3.121 ms) after their chunk',
    log: '2026-11-24-h200-final/workers/workers.log',
    holds: ["task start after its chunk's D2H median 1.006 ms, max 3.121 ms"],
  },
  {
    readme: '0.28× (1.513 ms → 5.436 ms)',
    log: '2026-11-24-h200-final/workers/workers.log',
    holds: ['with the host stage checksum against without it, 16×4 depth-first: 0.28× (1.513 ms → 5.436 ms)'],
  },
  {
    readme: '1.513 → 5.436 ms, the CPU stage limits (1 worker: 20.86 ms)',
    log: '2026-11-24-h200-final/workers/workers.log',
    holds: ['without the stage 1.513 ms', 'host checksum after each D2H: 5.436 ms', 'host checksum after each D2H: 20.863 ms'],
  },
  {
    readme: '1,228 tests, 1,173 passing and 55 skipped',
    log: '2026-11-24-ci/summary.txt',
    holds: ['at 38a0b38', '# tests 1228', '# pass 1173', '# skipped 55', '# duration_ms 168525'],
  },
];

describe("the README's figures", () => {
  for (const figure of SOURCED) {
    it(`"${figure.readme}" is in the README and its figures in ${figure.log}`, () => {
      assert.ok(readme.includes(figure.readme), 'not in the README');
      const text = log(figure.log);
      for (const held of figure.holds) assert.ok(text.includes(held), `${figure.log} lacks "${held}"`);
    });
  }

  it('quotes none of the figures no committed log holds, or an older run gave', () => {
    for (const stale of ['3.943 ms', '3 min 44 s', '0.6–1.3 ms', '1.00 to 1.14×', '0.07× (1.507 ms → 21.63 ms)', '55 GPU or two-GPU tests']) {
      assert.ok(!readme.includes(stale), stale);
    }
  });

  it('says the 7.77× of the CPU-bound stage was a spin loop that reads no memory, beside a stage that reads its chunk', () => {
    assert.match(
      readme,
      /\*\*7\.77×\*\*, for the built-in `cost`, a spin loop that reads no memory; the checksum, which reads every byte of its chunk, went 20\.86 → 5\.436 ms \(3\.84×\)/,
    );
    assert.equal((20.863 / 5.436).toFixed(2), '3.84');
  });
});
