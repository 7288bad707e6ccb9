import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { exitCodeFor } from '../../src/cli/exit-code.js';
import { UsageError } from '../../src/errors.js';
import { CONTROL } from '../../src/format.js';
import { runCli } from '../helpers/cli.js';

// Bytes that come from a file reach the terminal as visible escapes, never as its commands: the title-setting OSC,
// BEL, a screen clear and NUL of a file that is not JSON, a kernel name with ESC in a trace's error. The one place is
// the top-level catch, which every error paragraph passes through (src/cli/exit-code.ts).

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-terminal-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const write = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
/** Control characters but the newline, which a paragraph has. */
const raw = (text: string) => [...text.matchAll(new RegExp(CONTROL.source, 'g'))].map((m) => m[0].charCodeAt(0));
const hostile = write('e.json', '\u001b]0;owned\u0007\u001b[2J');
const nul = write('n.json', '\u0000\u001b[31mred');
const trace = (name: string) =>
  write(
    'kernel.json',
    JSON.stringify({
      schemaVersion: 1,
      traceEvents: [{ ph: 'X', cat: 'kernel', name, pid: 0, ts: 10, dur: -5, args: { device: 0, stream: 7 } }],
    }),
  );

describe('nothing raw from a file reaches the terminal', () => {
  const good = join('test', 'fixtures', 'h200-balanced-16-traced.json');
  const commands: [string, string[]][] = [
    ['report', ['report', hostile]],
    ['report of a file starting with NUL', ['report', nul]],
    ['compare', ['compare', good, hostile]],
    ['merge', ['merge', hostile, good]],
    ['analyze --rates', ['analyze', '--rates', hostile, join('test', 'fixtures', 'analyze', 'copy-overlapped.json')]],
    ['analyze quoting a kernel name in an error', ['analyze', trace('gemm\u001b]0;owned\u0007\u009b2J')]],
  ];
  for (const [what, args] of commands) {
    it(what, () => {
      const { code, stdout, stderr } = runCli(args);
      assert.equal(code, 2, stderr);
      assert.deepEqual(raw(stdout + stderr), [], JSON.stringify(stderr));
      assert.match(stderr, /\\u001b/);
    });
  }

  it('the OSC of a file that is not JSON is quoted as visible escapes', () => {
    const { stderr } = runCli(['report', hostile]);
    assert.match(stderr, /\\u001b\]0;owned\\u0007\\u001b\[2J/);
  });

  it('every paragraph the top-level catch prints, its hint and an internal error too', () => {
    let text = '';
    const print = (t: string) => {
      text += t;
    };
    assert.equal(exitCodeFor(new UsageError('bad \u001b[2J name', { hint: 'try \u0007 again' }), false, print), 2);
    assert.equal(exitCodeFor(new Error('crash \u202e near \u0000'), false, print), 70);
    assert.deepEqual(raw(text), []);
    assert.match(text, /bad \\u001b\[2J name\ntry \\u0007 again\n/);
    assert.match(text, /crash \\u202e near \\u0000/);
  });
});
