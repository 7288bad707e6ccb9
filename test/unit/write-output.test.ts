import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkOutputTarget, writeOutput } from '../../src/cli/write-file.js';
import { UsageError } from '../../src/errors.js';
import { packageRoot } from '../../src/paths.js';
import { cliEntry, runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-write-'));

function rejection(write: () => unknown): UsageError {
  try {
    write();
  } catch (error) {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the write to be refused');
}

describe('writing result and report files', () => {
  it('replaces an existing file whole and leaves no temporary file behind', async () => {
    const target = join(dir, 'result.json');
    writeFileSync(target, 'old contents, longer than the new ones');
    await writeOutput(target, '{"new":true}\n');
    assert.equal(readFileSync(target, 'utf8'), '{"new":true}\n');
    assert.deepEqual(
      readdirSync(dir).filter((name) => name.includes('result.json')),
      ['result.json'],
    );
  });

  it('names a missing folder and says how to create it', () => {
    const error = rejection(() => writeOutput(join(dir, 'no-such-folder', 'r.json'), '{}'));
    assert.equal(
      error.message,
      `Cannot write ${join(dir, 'no-such-folder', 'r.json')}: the folder ${join(dir, 'no-such-folder')} does not exist.`,
    );
    assert.match(error.hint ?? '', /mkdir -p/);
  });

  it('refuses a target that is a folder, or inside a file', () => {
    mkdirSync(join(dir, 'a-folder'));
    assert.match(
      rejection(() => writeOutput(join(dir, 'a-folder'), '{}')).message,
      /a-folder: it is a folder; name a file inside it\./,
    );
    writeFileSync(join(dir, 'plain'), '');
    assert.match(rejection(() => checkOutputTarget(join(dir, 'plain', 'r.json'))).message, /plain is not a folder\./);
  });

  it('run --json into a missing folder exits 2 before anything runs', () => {
    const { code, stderr } = runCli(['run', '--dry-run', '--json', '/no/such/folder/r.json']);
    assert.equal(code, 2);
    assert.match(
      stderr,
      /^cuda-pipe: Cannot write \/no\/such\/folder\/r\.json: the folder \/no\/such\/folder does not exist\./,
    );
  });

  it('compare --md writes the report to a file, and exits 2 for a missing folder', () => {
    const fixtures = join(packageRoot(), 'test', 'fixtures');
    const args = ['compare', join(fixtures, 'h100-balanced-1.json'), join(fixtures, 'h100-balanced-2.json')];
    const target = join(dir, 'compare.md');
    assert.equal(runCli([...args, '--md', target]).code, 0);
    assert.match(readFileSync(target, 'utf8'), /^#/);
    const { code, stderr } = runCli([...args, '--md', join(dir, 'missing', 'c.md')]);
    assert.equal(code, 2);
    assert.match(stderr, /the folder \S+missing does not exist/);
  });
});

describe('a reader that goes away', () => {
  it('exits 0 quietly when stdout is closed early, as `| head` does', async () => {
    const child = spawn(process.execPath, [...cliEntry(), 'run', '--dry-run', '--ops', '--chunks', '16000'], {
      cwd: packageRoot(),
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((done) => child.on('close', (exitCode) => done(exitCode)));
    assert.equal(code, 0, stderr);
    assert.equal(stderr, '');
  });
});
