import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runIdentity } from '../../src/api/identity.js';
import { rankDevice } from '../../src/cli/launcher.js';
import { builtinConfigsDir } from '../../src/paths.js';

// `run` and `sweep` give a launcher's rank the GPU of its local rank through one function, so that every rank of a
// `mpirun -np 2 cuda-pipe sweep ddp.yaml` sweeps on its own GPU rather than all on device 0.

const ddp = join(builtinConfigsDir(), 'ddp.yaml');
const rank1 = runIdentity(
  { OMPI_COMM_WORLD_RANK: '1', OMPI_COMM_WORLD_LOCAL_RANK: '1', OMPI_COMM_WORLD_SIZE: '2' },
  'h',
);

describe("the device of a launcher's rank", () => {
  it('is the local rank\u2019s for a one-device config, saying who chose it', () => {
    const chosen = rankDevice(ddp, {}, rank1, {});
    assert.equal(chosen?.device, 1);
    assert.match(chosen?.note ?? '', /OpenMPI local rank 1 chose device 1/);
  });

  it('is left to --device, to --devices, to a config over several devices, and to no launcher at all', () => {
    assert.equal(rankDevice(ddp, { device: 0 }, rank1, {}), null);
    assert.equal(rankDevice(ddp, { devices: 'all' }, rank1, {}), null);
    const dir = mkdtempSync(join(tmpdir(), 'rank-device-'));
    const spanning = join(dir, 'two.yaml');
    writeFileSync(spanning, `${readDdp()}devices: [0, 1]\n`);
    assert.equal(rankDevice(spanning, {}, rank1, {}), null);
    assert.equal(rankDevice(ddp, {}, runIdentity({}, 'h'), {}), null);
  });
});

function readDdp(): string {
  return readFileSync(ddp, 'utf8');
}
