import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_COLUMNS, fitLines, MIN_COLUMNS, outputColumns, visibleWidth } from '../../src/report/width.js';
import { overlong } from '../helpers/width.js';

describe('output width', () => {
  it("is the terminal's where stdout is one, and 100 columns where it is a pipe or a file", () => {
    assert.equal(outputColumns({ isTTY: true, columns: 132 }, {}), 132);
    assert.equal(outputColumns({ isTTY: false, columns: 132 } as never, {}), DEFAULT_COLUMNS);
    assert.equal(outputColumns({ isTTY: true, columns: 20 }, {}), MIN_COLUMNS);
  });

  it('takes COLUMNS where it is a whole number, terminal or not, and ignores it otherwise', () => {
    assert.equal(outputColumns({ isTTY: false, columns: undefined } as never, { COLUMNS: '160' }), 160);
    assert.equal(outputColumns({ isTTY: true, columns: 132 }, { COLUMNS: '80' }), 80);
    assert.equal(outputColumns({ isTTY: false, columns: undefined } as never, { COLUMNS: 'wide' }), DEFAULT_COLUMNS);
  });

  it('wraps a long line at words, its continuation indented under its text, and leaves lines that fit', () => {
    const line = `  • ${'word '.repeat(40).trim()}`;
    const fitted = fitLines(`short\n${line}`, 60);
    assert.deepEqual(overlong(fitted, 60), []);
    const [first, second, third] = fitted.split('\n');
    assert.equal(first, 'short');
    assert.ok(second?.startsWith('  • word'), second);
    assert.ok(third?.startsWith('    word'), third);
    assert.equal(
      fitted
        .split('\n')
        .map((l) => l.trim())
        .join(' '),
      `short ${line.trim()}`,
      'no word lost',
    );
    assert.doesNotMatch(fitted, /\S {2}\S/, 'no double space where wrapped lines joined');
  });

  it('counts colour codes as no width and cuts a word wider than the line', () => {
    assert.equal(visibleWidth('\u001b[1mbold\u001b[22m'), 4);
    assert.deepEqual(overlong(fitLines(`a ${'x'.repeat(150)}`, 80), 80), []);
  });

  it('wraps a 1 MiB line in linear time, every word kept in order and every line within the width', () => {
    const words = Array.from({ length: 150_000 }, (_, i) => (i % 997 === 500 ? 'y'.repeat(250) : `w${i}`));
    const line = `  ${words.join(' ')}`;
    const started = performance.now();
    const fitted = fitLines(line, 100).split('\n');
    assert.ok(performance.now() - started < 2000, "well under wrap-ansi's minutes");
    assert.deepEqual(
      fitted.filter((l) => l.length > 100),
      [],
    );
    assert.ok(fitted[0]?.startsWith('  w0 w1 '), fitted[0]);
    assert.ok(
      fitted.slice(1).every((l) => l.startsWith('    ')),
      'continuations indented two past the line',
    );
    // The long words are cut, never lost: their letters add up.
    assert.equal(fitted.join('').replaceAll(/[^y]/g, '').length, words.filter((w) => w.startsWith('y')).length * 250);
    assert.equal(
      fitted
        .join(' ')
        .split(/\s+/)
        .filter((w) => w.startsWith('w'))
        .join(' '),
      words.filter((w) => w.startsWith('w')).join(' '),
    );
  });
});
