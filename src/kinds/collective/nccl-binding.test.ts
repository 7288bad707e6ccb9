import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { DevicePtr, StreamHandle } from '../../cuda/types.js';
import { loadNccl, NcclError, UNIQUE_ID_BYTES } from './nccl.js';

// The libnccl binding against a stand-in library built here: its functions check what cuda-pipe passes (the unique
// id by value, NCCL 2.14's config struct, a call's arguments in order) and answer ncclInvalidArgument (4) on any
// difference, so the binding's wiring, the structs passed by value included, is tested without a GPU.
const FAKE = `#include <stdint.h>
#include <stddef.h>
#include <limits.h>
typedef struct { unsigned char internal[128]; } ncclUniqueId;
typedef struct { size_t size; unsigned int magic; unsigned int version; int blocking; int cgaClusterSize; int minCTAs;
  int maxCTAs; const char *netName; int splitShare; } ncclConfig;
#define COMM ((void *)0xC0)
static int idOk(ncclUniqueId id) { for (int i = 0; i < 128; i++) if (id.internal[i] != (unsigned char)(i * 3)) return 0; return 1; }
int ncclGetVersion(int *v) { *v = 22703; return 0; }
int ncclGetUniqueId(ncclUniqueId *id) { for (int i = 0; i < 128; i++) id->internal[i] = (unsigned char)(i * 3); return 0; }
int ncclCommInitAll(void **comms, int n, const int *devs) { for (int i = 0; i < n; i++) comms[i] = (void *)(uintptr_t)(0x100 + devs[i]); return 0; }
int ncclCommInitRank(void **comm, int nranks, ncclUniqueId id, int rank) { *comm = COMM; return nranks == 2 && rank == 1 && idOk(id) ? 0 : 4; }
#ifdef NONBLOCKING
int ncclCommInitRankConfig(void **comm, int nranks, ncclUniqueId id, int rank, ncclConfig *c) {
  int ok = nranks == 2 && rank == 1 && idOk(id) && c->size == sizeof(ncclConfig) && c->magic == 0xcafebeef && c->version == 21400
    && c->cgaClusterSize == INT_MIN && c->netName == NULL && c->splitShare == INT_MIN;
  int nonblocking = c->blocking == 0 && c->minCTAs == INT_MIN && c->maxCTAs == INT_MIN;
  int blocking8 = c->blocking == 1 && c->minCTAs == 8 && c->maxCTAs == 8;
  *comm = COMM;
  return ok && nonblocking ? 7 : ok && blocking8 ? 0 : 4;
}
int ncclCommFinalize(void *c) { return c == COMM ? 0 : 4; }
#endif
int ncclCommDestroy(void *c) { return c == COMM ? 0 : 4; }
int ncclCommAbort(void *c) { return 0; }
int ncclCommGetAsyncError(void *c, int *e) { *e = 0; return c == COMM ? 0 : 4; }
int ncclCommCount(void *c, int *n) { *n = 2; return c == COMM ? 0 : 4; }
int ncclGroupStart(void) { return 0; }
int ncclGroupEnd(void) { return 0; }
int ncclAllReduce(void *s, void *r, size_t n, int t, int op, void *c, void *st) {
  return s == (void *)0xA000 && r == s && n == 1024 && t == 7 && op == 0 && c == COMM && st == (void *)0x5000 ? 0 : 4;
}
int ncclReduceScatter(void *s, void *r, size_t n, int t, int op, void *c, void *st) {
  return s == (void *)0xA000 && r == (void *)(0xA000 + 512 * 4) && n == 512 && t == 7 && op == 0 && c == COMM ? 0 : 4;
}
int ncclAllGather(void *s, void *r, size_t n, int t, void *c, void *st) { return s == (void *)(0xA000 + 512 * 4) && r == (void *)0xA000 && n == 512 ? 0 : 4; }
const char *ncclGetErrorString(int r) { return r == 4 ? "invalid argument" : "other"; }
`;

function fakeNccl(nonblocking: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-fake-nccl-'));
  const source = join(dir, 'fake.c');
  writeFileSync(source, FAKE);
  const library = join(dir, 'libnccl.so.2');
  execFileSync('cc', ['-shared', '-fPIC', ...(nonblocking ? ['-DNONBLOCKING'] : []), '-o', library, source]);
  return library;
}

const noCompiler = spawnSync('cc', ['--version']).status === 0 ? false : 'no C compiler (cc) to build a fake libnccl';
const call = {
  buffer: 0xa000n as DevicePtr,
  elements: 1024,
  elementBytes: 4,
  dataType: 7,
  rank: 1,
  ranks: 2,
  stream: 0x5000n as StreamHandle,
};

describe('the libnccl binding against a stand-in library', { skip: noCompiler, timeout: 60_000 }, () => {
  it('passes the unique id and NCCL 2.14 config by value, makes a nonblocking communicator, and issues each collective', () => {
    const library = fakeNccl(true);
    const nccl = loadNccl({ CUDA_PIPE_NCCL: library });
    assert.equal(nccl.libraryPath, library);
    assert.equal(nccl.version(), 22703);
    const id = nccl.uniqueId();
    assert.equal(id.length, UNIQUE_ID_BYTES);
    assert.equal(id[5], 15);
    assert.equal(nccl.configurable, true);
    const comm = nccl.initRank(2, id, 1, 'rank 1');
    assert.equal(comm, 0xc0n);
    assert.equal(nccl.count(comm, 'rank 1'), 2);
    for (const collective of ['allreduce', 'reducescatter', 'allgather'] as const)
      assert.equal(nccl.issue({ ...call, collective, comm })(), 0, collective);
    nccl.release(comm, 'rank 1');
  });

  it('makes a blocking communicator whose collectives take a CTA count through the config (minCTAs = maxCTAs)', () => {
    const nccl = loadNccl({ CUDA_PIPE_NCCL: fakeNccl(true) });
    assert.equal(nccl.initRank(2, nccl.uniqueId(), 1, 'rank 1', { blocking: true, ctas: 8 }), 0xc0n);
    assert.throws(
      () => nccl.initRank(2, nccl.uniqueId(), 1, 'rank 1', { blocking: true, ctas: 9 }),
      /ncclCommInitRankConfig failed \(rank 1\): ncclInvalidArgument \(4\)/,
    );
  });

  it('without ncclCommInitRankConfig (before 2.14) makes a blocking communicator through ncclCommInitRank', () => {
    const nccl = loadNccl({ CUDA_PIPE_NCCL: fakeNccl(false) });
    assert.equal(nccl.configurable, false);
    assert.equal(nccl.initRank(2, nccl.uniqueId(), 1, 'rank 1'), 0xc0n);
    assert.throws(
      () => nccl.initRank(2, nccl.uniqueId(), 1, 'rank 1', { ctas: 8 }),
      /NCCL 2\.27\.3 takes no CTA count/,
    );
  });

  it('a failed call is an NcclError (exit 4) naming the call, the rank and NCCL\u2019s words', () => {
    const nccl = loadNccl({ CUDA_PIPE_NCCL: fakeNccl(true) });
    assert.throws(
      () => nccl.initRank(2, nccl.uniqueId(), 0, 'rank 0 of 2'),
      (error: unknown) => {
        assert.ok(error instanceof NcclError);
        assert.equal(error.exitCode, 4);
        assert.equal(
          error.message,
          'ncclCommInitRankConfig failed (rank 0 of 2): ncclInvalidArgument (4): invalid argument',
        );
        return true;
      },
    );
  });
});
