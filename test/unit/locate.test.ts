import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { libraryCandidates, resolveLibraryFile } from '../../src/cuda/locate.js';

describe('where CUDA libraries are looked for', () => {
  it('tries the explicit override first, then CUDA_PATH and CUDA_HOME, then the loader, then /usr/local/cuda', () => {
    const paths = libraryCandidates('cudart', {
      CUDA_PIPE_CUDART: '/x/libcudart.so',
      CUDA_PATH: '/opt/cuda',
      CUDA_HOME: '/opt/home',
    }).map((c) => `${c.origin}: ${c.path}`);
    assert.equal(paths[0], 'CUDA_PIPE_CUDART: /x/libcudart.so');
    assert.equal(paths[1], 'CUDA_PATH: /opt/cuda/lib64/libcudart.so.13');
    const firstHome = paths.findIndex((p) => p.startsWith('CUDA_HOME'));
    const firstLoader = paths.findIndex((p) => p.startsWith('dynamic loader'));
    const firstDefault = paths.findIndex((p) => p.startsWith('default location'));
    assert.ok(firstHome > 1 && firstLoader > firstHome && firstDefault > firstLoader);
    assert.ok(paths.includes('default location: /usr/local/cuda/lib64/libcudart.so.13'));
  });

  it('looks for the NVRTC sonames of CUDA 13, 12 and 11.2, newest first', () => {
    const sonames = libraryCandidates('nvrtc', {})
      .filter((c) => c.origin === 'dynamic loader search')
      .map((c) => c.path);
    assert.deepEqual(sonames, ['libnvrtc.so.13', 'libnvrtc.so.12', 'libnvrtc.so.11.2', 'libnvrtc.so']);
  });

  it('resolves a bare soname to a file through LD_LIBRARY_PATH without loading it', () => {
    const files = new Set(['/custom/lib/libnvrtc.so.12']);
    const found = resolveLibraryFile('nvrtc', { LD_LIBRARY_PATH: '/empty:/custom/lib' }, (p) => files.has(p), []);
    assert.equal(found, '/custom/lib/libnvrtc.so.12');
  });

  it('prefers a newer soname in a loader folder over an older one', () => {
    const files = new Set(['/usr/lib/x86_64-linux-gnu/libnvrtc.so.11.2', '/etc-listed/libnvrtc.so.13']);
    assert.equal(
      resolveLibraryFile('nvrtc', {}, (p) => files.has(p), ['/etc-listed']),
      '/etc-listed/libnvrtc.so.13',
    );
  });

  it('returns null when no candidate exists anywhere', () => {
    assert.equal(
      resolveLibraryFile('nvrtc', {}, () => false, []),
      null,
    );
  });
});
