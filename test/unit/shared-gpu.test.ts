import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { otherProcesses, sharingRecord } from '../../src/exec/sharing.js';
import { runWarnings } from '../../src/measure/warnings.js';
import { packageRoot } from '../../src/paths.js';
import { loadResults } from '../../src/result/load.js';
import { SHARING_NOT_CHECKED } from '../../src/result/environment.js';
import { RESULT_VERSION, type RunResult } from '../../src/result/schema.js';
import { makeResult } from '../helpers/results.js';

const OWN = 4242;
const shared = (result: RunResult, otherCount: number | null, checked = true): Omit<RunResult, 'warnings'> => ({
  ...result,
  clocks: { ...result.clocks, sharing: { checked, otherProcesses: otherCount, note: 'listed' } },
});

describe('someone else on the GPU', () => {
  it('counts the compute processes NVML lists, leaving out this one', () => {
    assert.equal(otherProcesses({ pids: [OWN], count: 1 }, OWN), 0);
    assert.equal(otherProcesses({ pids: [17, OWN, 99], count: 3 }, OWN), 2);
    // In a container NVML lists this process under the host's PID: one of the unknown ones is us.
    assert.equal(otherProcesses({ pids: [170012, 170555], count: 2 }, OWN), 1);
    // More than fit NVML's answer: the count alone is known.
    assert.equal(otherProcesses({ pids: [], count: 70 }, OWN), 69);
    assert.equal(
      otherProcesses({ pids: [], count: 0 }, OWN),
      0,
      'NVML that lists nothing (not permitted) never goes negative',
    );
  });

  it('records the most seen at once, or why it was not checked', () => {
    assert.deepEqual(
      sharingRecord(
        [
          { pids: [OWN], count: 1 },
          { pids: [OWN, 5, 6], count: 3 },
        ],
        OWN,
        null,
      ),
      { checked: true, otherProcesses: 2, note: 'compute processes listed through NVML before and after measuring' },
    );
    assert.deepEqual(sharingRecord([{ pids: [OWN], count: 1 }, null], OWN, null), {
      checked: false,
      otherProcesses: null,
      note: 'not checked: NVML could not list the compute processes on the GPU',
    });
    assert.deepEqual(
      sharingRecord([], OWN, 'libnvidia-ml.so.1 (NVML, part of the NVIDIA driver) could not be loaded'),
      {
        checked: false,
        otherProcesses: null,
        note: 'not checked: libnvidia-ml.so.1 (NVML, part of the NVIDIA driver) could not be loaded',
      },
    );
  });

  it('warns that the figures are shared, naming how many processes, with a remedy', () => {
    const clean = makeResult({ noise: 0.001 });
    assert.deepEqual(
      runWarnings(shared(clean, 2)).filter((w) => w.code === 'shared-gpu'),
      [
        {
          code: 'shared-gpu',
          message:
            '2 other compute processes were running on the GPU during the run: these figures are shared with them and will not repeat on an idle GPU.',
          remedy:
            'Measure on an idle GPU: stop the other processes (nvidia-smi lists them) or pick a free device with --device.',
        },
      ],
    );
    assert.match(
      runWarnings(shared(clean, 1)).find((w) => w.code === 'shared-gpu')?.message ?? '',
      /^1 other compute process was running/,
    );
    assert.deepEqual(runWarnings(shared(clean, 0)), []);
    assert.deepEqual(runWarnings(shared(clean, null, false)), []);
    assert.deepEqual(
      clean.clocks.sharing,
      SHARING_NOT_CHECKED,
      'a run that was given no listing says it did not check',
    );
  });

  it('version 2 files written before the check still load, as not checked and without the warning', () => {
    const fixtures = join(packageRoot(), 'test', 'fixtures');
    for (const name of ['h200-balanced-16-traced.json', 'h100-balanced-1.json']) {
      const [result] = loadResults(join(fixtures, name));
      assert.ok(result, name);
      assert.equal(result.version, RESULT_VERSION);
      assert.deepEqual(result.clocks.sharing, SHARING_NOT_CHECKED, name);
      assert.ok(!result.warnings.some((w) => w.code === 'shared-gpu'), name);
    }
    assert.equal(RESULT_VERSION, 2);
  });
});
