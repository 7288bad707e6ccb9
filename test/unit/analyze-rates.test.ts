import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ratesFor, ratesFromCopies, ratesFromFile } from '../../src/analysis/rates.js';
import { UsageError } from '../../src/errors.js';
import { packageRoot } from '../../src/paths.js';
import { probeBandwidth } from '../helpers/probe-bandwidth.js';

// The floor's link rates: a probe's pinned copies, a Result's traced copies, or the trace's own fastest copies.

const fixtures = join(packageRoot(), 'test', 'fixtures');
const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-rates-'));

function probeWith(bandwidth: unknown[] | null): string {
  const probe = JSON.parse(readFileSync(join(fixtures, 'h200x2-probe.json'), 'utf8')) as {
    devices: { bandwidth: unknown }[];
  };
  probe.devices[0]!.bandwidth = bandwidth;
  probe.devices[1]!.bandwidth = null;
  const path = join(dir, `probe-${bandwidth === null ? 'none' : bandwidth.length}.json`);
  writeFileSync(path, JSON.stringify(probe));
  return path;
}

describe('link rates', () => {
  it("a probe gives each direction's pinned rate, pageable ones passed over, and a device it did not probe takes the first's", () => {
    const source = ratesFromFile(
      probeWith([
        probeBandwidth('h2d', 'pageable', 20),
        probeBandwidth('h2d', 'pinned', 53.2),
        probeBandwidth('d2h', 'pinned', 54.1),
        probeBandwidth('bidirectional', 'pinned', 90),
      ]),
    );
    assert.equal(source.source, 'probe');
    assert.deepEqual(ratesFor(source, 0), { h2d: 53.2, d2h: 54.1 });
    assert.deepEqual(ratesFor(source, 5), { h2d: 53.2, d2h: 54.1 });
  });

  it('a probe without --bandwidth is refused with exit 2', () => {
    assert.throws(
      () => ratesFromFile(probeWith(null)),
      (error: unknown) => error instanceof UsageError && /the probe has no copy rates/.test(error.message),
    );
  });

  it("a Result gives its traced copies' rates", () => {
    const source = ratesFromFile(join(fixtures, 'h200-balanced-16-traced.json'));
    assert.equal(source.source, 'result');
    const rates = ratesFor(source, 0);
    assert.ok(rates.h2d !== null && rates.h2d > 1 && rates.h2d < 1000, `h2d ${rates.h2d}`);
    assert.ok(rates.d2h !== null && rates.d2h > 1 && rates.d2h < 1000, `d2h ${rates.d2h}`);
  });

  it('from copies: the 5 fastest of a direction together, 4 MB in 0.1 ms and 5 × 8 MB in 0.2 ms giving (40 MB / 1 ms) 40 GB/s', () => {
    const fast = Array.from({ length: 5 }, (_, i) => ({
      direction: 'h2d' as const,
      bytes: 8e6,
      start: i,
      end: i + 0.2,
    }));
    const slow = { direction: 'h2d' as const, bytes: 4e6, start: 10, end: 10.2 };
    const rates = ratesFromCopies([...fast, slow]);
    assert.ok(Math.abs(rates.h2d! - 40) < 1e-9, `${rates.h2d}`);
    assert.equal(rates.d2h, null);
  });
});
