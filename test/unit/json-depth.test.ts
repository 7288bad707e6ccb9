import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { jsonDeeperThan } from '../../src/result/load.js';

/** The scan a character at a time, as result/load.ts had it: what the regular expressions must agree with. */
function byCharacter(text: string, limit: number): number | null {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '[' || c === '{') {
      depth += 1;
      if (depth > limit) return i;
    } else if (c === ']' || c === '}') depth -= 1;
  }
  return null;
}

describe('how deep a saved document nests', { timeout: 60_000 }, () => {
  it('finds the opening bracket past the limit, skipping brackets inside strings and escaped quotes', () => {
    assert.equal(jsonDeeperThan('[[[1]]]', 2), 2);
    assert.equal(jsonDeeperThan('[[[1]]]', 3), null);
    assert.equal(jsonDeeperThan('{"a":"[[[[","b":[{}]}', 3), null);
    assert.equal(jsonDeeperThan('{"a\\"[[":[[0]]}', 2), 10);
    assert.equal(jsonDeeperThan('["\\\\",[[0]]]', 2), 7);
    assert.equal(jsonDeeperThan('["unterminated [[[[', 1), null);
  });

  it('agrees with the scan a character at a time on any text of brackets, braces, quotes and backslashes', () => {
    const text = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', ',', ':'), maxLength: 80 });
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 6 }), (json, limit) => {
        assert.equal(jsonDeeperThan(json, limit), byCharacter(json, limit));
      }),
      { numRuns: 3000 },
    );
  });

  it('scans a string of a million characters and a million escapes', () => {
    const long = `[${JSON.stringify('x'.repeat(1e6))},${JSON.stringify('\\'.repeat(1e6))},[[0]]]`;
    assert.equal(jsonDeeperThan(long, 2), long.lastIndexOf('[[') + 1);
    assert.equal(jsonDeeperThan(long, 3), null);
  });
});
