import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../helpers/cli.js';

// dlopen of a FIFO blocks the JS thread until a writer comes, where no deadline of node:test and no signal handler
// can end it: every case runs in a child process with a deadline, so a regression fails in seconds instead.

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-hostile-libs-'));

function fifo(path: string): string {
  assert.equal(spawnSync('mkfifo', [path]).status, 0);
  return path;
}

/** A CUDA root whose lib64 and lib hold every soname of `stem` as a FIFO. */
function fifoRoot(name: string, stem: string, versions: readonly string[]): string {
  const root = join(dir, name);
  for (const sub of ['lib64', 'lib']) {
    mkdirSync(join(root, sub), { recursive: true });
    for (const version of versions) fifo(join(root, sub, `${stem}.so${version}`));
  }
  return root;
}

/** Runs `body` (an ES module's text, which may import `load` and `nccl`) in a child node, for at most 15 s. */
function inChild(body: string, env: NodeJS.ProcessEnv = {}) {
  const load = new URL('../../src/cuda/load.js', import.meta.url).href;
  const nccl = new URL('../../src/kinds/collective/nccl-locate.js', import.meta.url).href;
  const script = `const load = await import(${JSON.stringify(load)}); const nccl = await import(${JSON.stringify(nccl)});\n${body}`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 15_000,
    env: { ...process.env, ...env },
  });
  assert.equal(child.signal, null, `the child hung until its deadline: ${child.stderr}`);
  return child;
}

describe('libraries that are FIFOs', () => {
  it('the shared search passes over a FIFO candidate with the reason, without opening it', () => {
    const path = fifo(join(dir, 'libcudart.so.13'));
    const child = inChild(
      `const found = load.firstLoadable([{ path: ${JSON.stringify(path)} }], () => null); console.log(JSON.stringify(found.attempts.map((a) => a.reason)));`,
    );
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout), ['is a named pipe (FIFO), not a regular file, so not a shared library']);
  });

  it('CUDA_PIPE_NCCL naming a FIFO is refused, naming the variable', () => {
    const path = fifo(join(dir, 'libnccl.so.2'));
    const child = inChild(
      `try { nccl.loadNcclLibrary({ CUDA_PIPE_NCCL: ${JSON.stringify(path)} }); } catch (error) { console.log(error.constructor.name, error.message); }`,
    );
    assert.equal(child.status, 0, child.stderr);
    assert.match(
      child.stdout,
      /^LibraryOverrideError CUDA_PIPE_NCCL=\S+libnccl\.so\.2: is a named pipe \(FIFO\), not a regular file, so not a shared library\.\n$/,
    );
  });

  it('CUDA_PIPE_CUPTI naming a FIFO leaves CUPTI unavailable, saying why, without opening it', () => {
    const path = fifo(join(dir, 'libcupti.so.13'));
    const cupti = new URL('../../src/cuda/cupti.js', import.meta.url).href;
    const child = inChild(
      `const { openCupti } = await import(${JSON.stringify(cupti)}); console.log(openCupti({ CUDA_PIPE_CUPTI: ${JSON.stringify(path)} }).unavailable);`,
    );
    assert.equal(child.status, 0, child.stderr);
    assert.match(
      child.stdout,
      /^no libcupti found \(CUDA_PIPE_CUPTI=\S+libcupti\.so\.13: is a named pipe \(FIFO\), not a regular file, so not a shared library\)/,
    );
  });

  it('a FIFO in LD_LIBRARY_PATH under a bare soname is not handed to the loader', () => {
    const folder = join(dir, 'ld');
    mkdirSync(folder);
    fifo(join(folder, 'libcublas.so.13'));
    const child = inChild(`console.log(load.unfitLibraryFile('libcublas.so.13'));`, { LD_LIBRARY_PATH: folder });
    assert.match(child.stdout, /ld\/libcublas\.so\.13 \(LD_LIBRARY_PATH\) is a named pipe \(FIFO\)/);
  });

  it('kernels --check and probe end with CUDA_PATH holding FIFOs for libnvrtc and libcudart', () => {
    const root = fifoRoot('cuda', 'libnvrtc', ['.13', '.12', '.11.2', '']);
    for (const version of ['.13', '.12', '']) fifo(join(root, 'lib64', `libcudart.so${version}`));
    const check = runCli(['kernels', '--check'], { CUDA_PATH: root }, { timeoutMs: 20_000 });
    assert.notEqual(check.code, null, 'kernels --check hung on a FIFO');
    // Past the FIFOs the search goes on: where the system has an NVRTC (CI installs Debian's) the check compiles with
    // it; where it has none, the FIFO is named among the places tried.
    assert.doesNotMatch(check.stdout, new RegExp(`^NVRTC: ${root}`, 'm'));
    if (check.code === 0) assert.match(check.stdout, /^\d+ of \d+ sources compiled for sm_\d+ [\s\S]*^NVRTC: \//m);
    else
      assert.match(
        check.stderr,
        /lib64\/libnvrtc\.so\.13 \(CUDA_PATH\): is a named pipe \(FIFO\), not a regular file, so not a shared library/,
      );
    const probe = runCli(['probe'], { CUDA_PATH: root }, { timeoutMs: 20_000 });
    assert.equal(probe.code, 3, probe.stderr);
  });
});
