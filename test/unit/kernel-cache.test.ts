import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { cacheKey, compileKernelSource } from '../../src/kernels/compile.js';
import { nvrtcSkipReason } from '../helpers/nvrtc.js';

const source =
  'extern "C" __global__ void add_one(float *x, unsigned long long n) { unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }';

describe('the kernel cache key', () => {
  const base = { sourcePath: '/k.cu', source, options: [], arch: 'sm_90' };
  it('changes with the source, the options, the architecture and the NVRTC build, and with nothing else', async () => {
    const key = cacheKey(base, 'nvrtc-a');
    assert.equal(cacheKey({ ...base, sourcePath: '/elsewhere.cu' }, 'nvrtc-a'), key);
    assert.notEqual(cacheKey({ ...base, source: source + ' ' }, 'nvrtc-a'), key);
    assert.notEqual(cacheKey({ ...base, options: ['--use_fast_math'] }, 'nvrtc-a'), key);
    assert.notEqual(cacheKey({ ...base, arch: 'sm_80' }, 'nvrtc-a'), key);
    assert.notEqual(cacheKey(base, 'nvrtc-b'), key);
  });
});

describe('compiling kernels through the cache', { skip: nvrtcSkipReason() ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-cache-'));
  const env = { ...process.env, CUDA_PIPE_CACHE_DIR: dir };
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('compiles with NVRTC on a miss and serves the same CUBIN from disk on a hit', async () => {
    const request = { sourcePath: '/k/add_one.cu', source, options: [], arch: 'sm_90' };
    const first = await compileKernelSource(request, env);
    assert.equal(first.cached, false);
    assert.match(first.nvrtcVersion, /^\d+\.\d+$/);
    assert.deepEqual(
      readdirSync(dir)
        .sort()
        .map((f) => f.split('.').pop()),
      ['cubin', 'json'],
    );
    const second = await compileKernelSource(request, env);
    assert.equal(second.cached, true);
    assert.deepEqual(second.cubin, first.cubin);
    assert.equal(second.nvrtcVersion, first.nvrtcVersion);
    assert.equal((await compileKernelSource({ ...request, arch: 'sm_80' }, env)).cached, false);
  });

  it("turns a compile error into a usage error carrying NVRTC's log with file and line", async () => {
    const broken = {
      sourcePath: '/k/broken.cu',
      source: 'extern "C" __global__ void b(float *x) {\n  x[0] = nope;\n}',
      options: [],
      arch: 'sm_90',
    };
    await assert.rejects(compileKernelSource(broken, env), (error: unknown) => {
      assert.ok(error instanceof UsageError);
      assert.match(
        error.message,
        /could not compile \/k\/broken\.cu for sm_90:\n\/k\/broken\.cu\(2\): error: identifier "nope" is undefined/,
      );
      return true;
    });
  });
});

describe('cache entries that are not what the cache wrote', { skip: nvrtcSkipReason() ?? false }, () => {
  const request = { sourcePath: '/k/add_one.cu', source, options: [], arch: 'sm_90' };

  /** A cache folder with one good entry for `request`, and the paths of its two files. */
  async function primed(): Promise<{ env: NodeJS.ProcessEnv; cubin: string; meta: string; good: Uint8Array }> {
    const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-cache-'));
    const env = { ...process.env, CUDA_PIPE_CACHE_DIR: dir };
    const good = (await compileKernelSource(request, env, () => assert.fail('a fresh cache has nothing to rebuild')))
      .cubin;
    const files = readdirSync(dir);
    const of = (ext: string) => join(dir, files.find((f) => f.endsWith(ext)) as string);
    return { env, cubin: of('.cubin'), meta: of('.json'), good };
  }

  /** Compiles `request` after `spoil` and returns what the cache said; the CUBIN must be the good one again. */
  async function rebuilt(spoil: (entry: Awaited<ReturnType<typeof primed>>) => void): Promise<string> {
    const entry = await primed();
    spoil(entry);
    const lines: string[] = [];
    const started = performance.now();
    const compiled = await compileKernelSource(request, entry.env, (line) => lines.push(line));
    assert.ok(performance.now() - started < 20_000, 'must not hang');
    assert.equal(compiled.cached, false);
    assert.deepEqual(compiled.cubin, entry.good);
    assert.equal(lines.length, 1);
    assert.equal(compiled.cacheProblem !== null && lines[0]?.includes(compiled.cacheProblem), true);
    // The rebuilt entry is good again: the next look-up is a quiet hit.
    assert.equal((await compileKernelSource(request, entry.env, () => assert.fail('rebuilt once'))).cached, true);
    return lines[0] ?? '';
  }

  it('rebuilds an entry whose CUBIN is a FIFO, without waiting for a writer', async () => {
    const line = await rebuilt(({ cubin }) => {
      rmSync(cubin);
      execFileSync('mkfifo', [cubin]);
    });
    assert.match(
      line,
      /^cuda-pipe: the kernel cache entry for \/k\/add_one\.cu \(sm_90\) has an unreadable CUBIN \(is a named pipe \(FIFO\), not a regular file\); compiling it again\.$/,
    );
  });

  it('rebuilds an entry whose CUBIN is a link to /dev/zero, without reading it', async () => {
    assert.match(
      await rebuilt(({ cubin }) => {
        rmSync(cubin);
        symlinkSync('/dev/zero', cubin);
      }),
      /unreadable CUBIN \(is a device, not a regular file\)/,
    );
  });

  it('rebuilds an empty, a truncated or a corrupted CUBIN, found by its size and hash', async () => {
    assert.match(
      await rebuilt(({ cubin }) => writeFileSync(cubin, '')),
      /has a CUBIN of 0 bytes where \d+ were written/,
    );
    assert.match(
      await rebuilt(({ cubin, good }) => writeFileSync(cubin, good.subarray(0, 100))),
      /has a CUBIN of 100 bytes/,
    );
    assert.match(
      await rebuilt(({ cubin, good }) => {
        const flipped = new Uint8Array(good);
        flipped[flipped.length - 1] = (flipped[flipped.length - 1] ?? 0) ^ 0xff;
        writeFileSync(cubin, flipped);
      }),
      /whose content does not match its recorded hash/,
    );
  });

  it('rebuilds an entry whose metadata is garbage, a FIFO or from another format', async () => {
    assert.match(
      await rebuilt(({ meta }) => writeFileSync(meta, '{"not json')),
      /has unreadable metadata \(Unexpected|has unreadable metadata \(.*JSON/,
    );
    assert.match(
      await rebuilt(({ meta }) => {
        rmSync(meta);
        execFileSync('mkfifo', [meta]);
      }),
      /has unreadable metadata \(is a named pipe \(FIFO\), not a regular file\)/,
    );
    assert.match(
      await rebuilt(({ meta }) =>
        writeFileSync(meta, JSON.stringify({ sourcePath: '/k.cu', arch: 'sm_90', nvrtcVersion: '11.8', options: [] })),
      ),
      /has metadata \S+\.json that this version of cuda-pipe did not write/,
    );
  });

  it('records the kernels and parameter types NVRTC emitted, on a miss and on a hit alike', async () => {
    const entry = await primed();
    const hit = await compileKernelSource(request, entry.env);
    assert.equal(hit.cached, true);
    assert.deepEqual(hit.entries, { add_one: ['u64', 'u64'] });
  });

  it('a CUBIN being written (no metadata yet) is a plain miss, not a bad entry', async () => {
    const entry = await primed();
    rmSync(entry.meta);
    assert.equal((await compileKernelSource(request, entry.env, () => assert.fail('nothing to report'))).cached, false);
  });
});

describe('NVRTC options', { skip: nvrtcSkipReason() ?? false }, () => {
  it('an option NVRTC does not know is a usage error naming it (exit 2), not a device failure', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-cache-'));
    const request = { sourcePath: '/k/add_one.cu', source, options: ['--no-such-option'], arch: 'sm_90' };
    await assert.rejects(
      compileKernelSource(request, { ...process.env, CUDA_PIPE_CACHE_DIR: dir }),
      (error: unknown) => {
        assert.ok(error instanceof UsageError);
        assert.equal(error.exitCode, 2);
        assert.match(
          error.message,
          /refused the options for \/k\/add_one\.cu \(--no-such-option\): nvrtc: error: unrecognized option --no-such-option/,
        );
        return true;
      },
    );
  });
});
