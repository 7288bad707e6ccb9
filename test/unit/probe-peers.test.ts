import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { peerMatrix } from '../../src/api/probe.js';
import { deviceSelection } from '../../src/cli/numbers.js';
import type { PeerFacts } from '../../src/cuda/peer.js';
import { renderProbe } from '../../src/report/probe.js';
import { makeStyle } from '../../src/report/style.js';
import { type PeerLink, type ProbeDocument, ProbeDocumentSchema } from '../../src/result/probe.js';
import { runCli } from '../helpers/cli.js';

// A probe of two H200s joined by NVLink, written by hand in the shape `probe --device 0,1 --json` gives: the devices'
// facts are those recorded on the H200 host, the peer facts what the driver reports for NVLink, and the copy rates
// between the devices (256 MiB, ~390 GB/s one way, ~700 GB/s both ways at once) are illustrative, not measured.
const raw = JSON.parse(readFileSync(join('test', 'fixtures', 'h200x2-probe.json'), 'utf8')) as unknown;
const h200x2 = ProbeDocumentSchema.parse(raw);
const plain = makeStyle(process.stdout, { NO_COLOR: '1' });

/** The matrix's rows as cells, read back from the rendered table: the header row first. */
function matrixRows(text: string): string[][] {
  const section = text.slice(text.indexOf('Between devices'));
  return section
    .split('\n')
    .filter((line) => /^│ +(to|from) /.test(line) || /^│ +│ to /.test(line))
    .map((line) =>
      line
        .split('│')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

/** The peer copy table's rows as cells, without its header. */
function copyRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => /^│ \d+ [→⇄] \d+/.test(line))
    .map((line) =>
      line
        .split('│')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

function withMatrix(doc: ProbeDocument, matrix: PeerLink[], devices: number): ProbeDocument {
  const facts = doc.devices[0]?.facts;
  assert.ok(facts);
  return {
    ...doc,
    devices: Array.from({ length: devices }, (_, index) => ({ facts: { ...facts, index }, bandwidth: null })),
    peers: { matrix, bandwidth: null },
  };
}

describe('probe document: peers', () => {
  it('accepts a two-device probe with its peer matrix and copies between the devices', () => {
    const result = ProbeDocumentSchema.safeParse(raw);
    assert.ok(result.success);
    assert.equal(result.data.devices.length, 2);
    assert.deepEqual(
      result.data.peers?.matrix.map((l) => `${l.from}→${l.to} ${l.canAccess} ${l.performanceRank} ${l.nativeAtomics}`),
      ['0→1 true 0 true', '1→0 true 0 true'],
    );
    assert.deepEqual(
      result.data.peers?.bandwidth?.map(
        (b) => `${b.from}→${b.to} ${b.path} ${b.bidirectional} ${b.gbPerSecond.toFixed(1)}`,
      ),
      ['0→1 peer false 389.9', '1→0 peer false 389.5', '0→1 peer true 702.1'],
    );
  });

  it('accepts a probe file from before peers (one device, no peers section) and reads it as having none', () => {
    const older = structuredClone(raw) as { devices: unknown[]; peers?: unknown };
    delete older.peers;
    older.devices = older.devices.slice(0, 1);
    const result = ProbeDocumentSchema.safeParse(older);
    assert.ok(result.success);
    assert.equal(result.data.peers, undefined);
  });

  it('accepts a matrix whose copies were not measured, and rejects a copy path other than peer or staged', () => {
    assert.ok(
      ProbeDocumentSchema.safeParse({ ...h200x2, peers: { matrix: h200x2.peers?.matrix, bandwidth: null } }).success,
    );
    const nvlink = structuredClone(h200x2);
    const row = nvlink.peers?.bandwidth?.[0];
    assert.ok(row);
    (row as { path: string }).path = 'nvlink';
    const result = ProbeDocumentSchema.safeParse(nvlink);
    assert.equal(result.success, false);
    assert.deepEqual(result.error?.issues[0]?.path, ['peers', 'bandwidth', 0, 'path']);
  });

  it('keeps each copy rate equal to the bytes it moved over its median time', () => {
    for (const b of h200x2.peers?.bandwidth ?? []) {
      const moved = b.bidirectional ? 2 * b.bytes : b.bytes;
      assert.equal(b.gbPerSecond.toFixed(6), (moved / b.stats.median / 1e6).toFixed(6));
      assert.equal(b.stats.n, b.samplesMs.length);
    }
  });
});

describe('probe report: peers', () => {
  const text = renderProbe(h200x2, plain);

  it('draws the matrix of the two H200s: peer access both ways at rank 0 with atomics, a dash on the diagonal', () => {
    assert.deepEqual(matrixRows(text), [
      ['', 'to 0', 'to 1'],
      ['from 0', '—', 'peer · rank 0 · atomics'],
      ['from 1', 'peer · rank 0 · atomics', '—'],
    ]);
  });

  it('explains rank and staged in a one-line legend under the matrix', () => {
    const lines = text.split('\n');
    const legend = lines.find((line) => line.startsWith('peer: '));
    assert.ok(legend);
    assert.match(legend, /rank: the driver's rank of the link, lower is faster/);
    assert.match(legend, /staged via host: no peer access, the driver copies through host memory/);
    assert.ok(lines.indexOf(legend) > lines.findIndex((line) => line.startsWith('│ from 1')));
  });

  it('lists the copies between the devices: each way alone, and both ways at once with the rate of both together', () => {
    assert.deepEqual(copyRows(text), [
      ['0 → 1', 'peer', '256 MiB', '0.688 ms', '0.3%', '389.9 GB/s'],
      ['1 → 0', 'peer', '256 MiB', '0.689 ms', '0.3%', '389.5 GB/s'],
      ['0 ⇄ 1 (both ways at once)', 'peer', '256 MiB each way', '0.765 ms', '0.4%', '702.1 GB/s'],
    ]);
  });

  it('says "staged via host" where the driver gives no peer access, and shows no rank or atomics for it', () => {
    const staged = withMatrix(
      h200x2,
      [
        { from: 0, to: 1, canAccess: false, performanceRank: 0, nativeAtomics: false },
        { from: 1, to: 0, canAccess: false, performanceRank: 0, nativeAtomics: false },
      ],
      2,
    );
    const rendered = renderProbe(staged, plain);
    assert.deepEqual(matrixRows(rendered), [
      ['', 'to 0', 'to 1'],
      ['from 0', '—', 'staged via host'],
      ['from 1', 'staged via host', '—'],
    ]);
    assert.deepEqual(copyRows(rendered), []);
  });

  it('draws three devices with mixed paths: NVLink between 0 and 1, PCIe peer access without atomics to 2, staged from 2', () => {
    const nvlink = { canAccess: true, performanceRank: 0, nativeAtomics: true };
    const pcie = { canAccess: true, performanceRank: 1, nativeAtomics: false };
    const none = { canAccess: false, performanceRank: 0, nativeAtomics: false };
    const mixed = withMatrix(
      h200x2,
      [
        { from: 0, to: 1, ...nvlink },
        { from: 0, to: 2, ...pcie },
        { from: 1, to: 0, ...nvlink },
        { from: 1, to: 2, ...pcie },
        { from: 2, to: 0, ...none },
        { from: 2, to: 1, ...none },
      ],
      3,
    );
    assert.deepEqual(matrixRows(renderProbe(mixed, plain)), [
      ['', 'to 0', 'to 1', 'to 2'],
      ['from 0', '—', 'peer · rank 0 · atomics', 'peer · rank 1'],
      ['from 1', 'peer · rank 0 · atomics', '—', 'peer · rank 1'],
      ['from 2', 'staged via host', 'staged via host', '—'],
    ]);
  });

  it('has no section between devices for a probe of one device', () => {
    const one: ProbeDocument = { ...h200x2, devices: h200x2.devices.slice(0, 1) };
    delete one.peers;
    const rendered = renderProbe(one, plain);
    assert.match(rendered, /Device 0: NVIDIA H200/);
    assert.doesNotMatch(rendered, /Between devices|staged via host|peer ·/);
  });
});

describe('peer matrix from the driver', () => {
  const asked: string[] = [];
  const facts = (device: number, peer: number): PeerFacts => {
    asked.push(`${device}→${peer}`);
    return { canAccess: device !== 2 && peer !== 2, performanceRank: device + peer, nativeAtomics: device === 0 };
  };

  it('asks about every ordered pair once, row by row in the order given, and never about a device and itself', () => {
    asked.length = 0;
    const matrix = peerMatrix([2, 0, 1], facts);
    assert.deepEqual(asked, ['2→0', '2→1', '0→2', '0→1', '1→2', '1→0']);
    assert.deepEqual(matrix, [
      { from: 2, to: 0, canAccess: false, performanceRank: 2, nativeAtomics: false },
      { from: 2, to: 1, canAccess: false, performanceRank: 3, nativeAtomics: false },
      { from: 0, to: 2, canAccess: false, performanceRank: 2, nativeAtomics: true },
      { from: 0, to: 1, canAccess: true, performanceRank: 1, nativeAtomics: true },
      { from: 1, to: 2, canAccess: false, performanceRank: 3, nativeAtomics: false },
      { from: 1, to: 0, canAccess: true, performanceRank: 1, nativeAtomics: false },
    ]);
  });

  it('is empty for one device, without asking the driver', () => {
    asked.length = 0;
    assert.deepEqual(peerMatrix([0], facts), []);
    assert.deepEqual(asked, []);
  });

  it('keeps only the fields the document defines, whatever else the wrapper returns', () => {
    const more = (): PeerFacts => ({
      canAccess: true,
      performanceRank: 0,
      nativeAtomics: true,
      ...{ cudaArrayAccess: true },
    });
    assert.deepEqual(Object.keys(peerMatrix([0, 1], more)[0] ?? {}), [
      'from',
      'to',
      'canAccess',
      'performanceRank',
      'nativeAtomics',
    ]);
  });
});

describe('probe --device', () => {
  it('takes "all", one index, or indexes separated by commas in the order given, and refuses one listed twice', () => {
    assert.equal(deviceSelection('all'), 'all');
    assert.deepEqual(deviceSelection('1'), [1]);
    assert.deepEqual(deviceSelection('0,1'), [0, 1]);
    assert.deepEqual(deviceSelection('3, 1'), [3, 1]);
    assert.throws(() => deviceSelection('3, 1,3'), /device 3 is listed twice in "3, 1,3"; list each device once\./);
  });

  it('rejects what is not a list of device indexes', () => {
    for (const bad of ['', '0,', '-1', '1.5', 'x', '0,all', '1e9', '2147483648']) {
      assert.throws(
        () => deviceSelection(bad),
        /expected a device index \(0 to 2147483647, in digits\), indexes separated by commas such as 0,1, or "all"/,
        bad,
      );
    }
  });

  it('exits 2 on a bad list before looking for a GPU', () => {
    const { code, stderr } = runCli(['probe', '--device', '0,x']);
    assert.equal(code, 2);
    assert.match(stderr, /option '--device <n\|n,m,…\|all>' argument '0,x' is invalid/);
  });
});
