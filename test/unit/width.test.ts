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
});
