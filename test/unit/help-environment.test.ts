import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { environmentList, topLevelHelp } from '../../src/cli/help-text.js';
import { KIND_ENVIRONMENT } from '../../src/kinds/index.js';

/** Every .ts file under src/. */
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );

/**
 * The variables src/ reads: `env.NAME` and `env['NAME']` wherever they are, and where a file reads through a computed
 * key (`env[variable]`, `env[launcher.rank]`), every string in it spelled as a variable (capitals, digits and
 * underscores; OpenMPI's job id has lower case after its prefix), since those strings are what the key is taken from.
 */
// Strings so spelled in those files that are no variable: a launcher's name (identity.ts).
const NOT_VARIABLES = new Set(['MVAPICH']);

function variablesRead(folders: readonly string[] = ['src']): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of folders.flatMap(sources)) {
    if (file.endsWith(join('cli', 'help-text.ts'))) continue;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\benv\??\.([A-Z_][A-Z0-9_]*)\b/g)) found.set(m[1] as string, file);
    for (const m of text.matchAll(/\benv\[\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]\s*\]/g)) found.set(m[1] as string, file);
    // A kind's library names its override for src/cuda/ffi.ts, which reads env[spec.override].
    for (const m of text.matchAll(/\boverride:\s*['"]([A-Z_][A-Z0-9_]*)['"]/g)) found.set(m[1] as string, file);
    if (/\benv\[\s*[^'"\s]/.test(text)) {
      for (const m of text.matchAll(/['"]([A-Z][A-Z0-9]*(?:_[A-Za-z0-9]+)*)['"]/g))
        if (!NOT_VARIABLES.has(m[1] as string)) found.set(m[1] as string, file);
    }
  }
  return found;
}

describe('--help lists the environment', () => {
  const help = topLevelHelp(KIND_ENVIRONMENT);
  const listed = new Set(environmentList(KIND_ENVIRONMENT).flatMap(([names]) => names.split(', ')));

  it('names every environment variable that src/ reads', () => {
    const read = variablesRead();
    // The scan must see the indirect reads too, or it would pass by finding nothing.
    for (const name of [
      'CUDA_PIPE_CUPTI',
      'CUDA_PIPE_CUBLAS',
      'CUDA_PIPE_CUBLASLT',
      'CUDA_PIPE_NCCL',
      'CUDA_PIPE_JOB_ID',
      'OMPI_COMM_WORLD_RANK',
      'NO_COLOR',
    ])
      assert.ok(read.has(name), name);
    const missing = [...read].filter(([name]) => !listed.has(name)).map(([name, file]) => `${name} (${file})`);
    assert.deepEqual(missing, []);
    for (const name of read.keys()) assert.match(help, new RegExp(`\\b${name}\\b`), name);
  });

  it('lists only variables that src/ or a listed kind reads', () => {
    // A fixture kind the tests add to the list (kinds-fixture.test.ts) reads its variables in its own folder.
    const read = variablesRead(['src', join('test', 'fixtures', 'kinds')]);
    assert.deepEqual(
      [...listed].filter((name) => !read.has(name)),
      [],
    );
  });

  it('fits the environment section in 100 columns', () => {
    const section = help.slice(help.indexOf('Environment:'));
    for (const line of section.split('\n')) assert.ok(line.length <= 100, line);
  });
});
