import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import stringWidth from 'string-width';
import { textWidth } from '../../src/report/text-width.js';

// textWidth stands in for string-width inside wrap-ansi in the CLI's bundle: any difference would move a line break.
describe('textWidth counts columns exactly as string-width does', { timeout: 60_000 }, () => {
  it('for every character below U+3000 alone', () => {
    const differ: string[] = [];
    for (let code = 0; code < 0x3000; code++) {
      const text = String.fromCodePoint(code);
      if (textWidth(text) !== stringWidth(text)) differ.push(code.toString(16));
    }
    assert.deepEqual(differ, []);
  });

  it('for strings of the characters the fast path takes, with colour codes, marks and wide characters mixed in', () => {
    const pieces = [
      'a',
      ' ',
      '~',
      'é',
      '×',
      '±',
      '·',
      '→',
      '…',
      '—',
      '│',
      '≥',
      '\u00ad',
      '©',
      '\u0301',
      '\u001b[1m',
      '\u001b[0m',
      '漢',
      '😀',
      '\u200d',
      '\n',
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 30 }), (parts) => {
        const text = parts.join('');
        assert.equal(textWidth(text), stringWidth(text), JSON.stringify(text));
      }),
      { numRuns: 2000 },
    );
  });
});
