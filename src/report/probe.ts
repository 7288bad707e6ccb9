import { formatBytes, formatMs, formatPercent, formatRate } from '../format.js';
import type { Bandwidth, PeerBandwidth, PeerLink, Peers, ProbeDocument } from '../result/probe.js';
import type { DeviceFacts } from '../result/environment.js';
import { type Column, fitPairs, fitTable, type Layout, without } from './fold.js';
import type { Style } from './style.js';
import { DEFAULT_COLUMNS } from './width.js';

/**
 * The terminal view, its tables within `columns` (the CLI wraps its prose lines): the answer, then each device's facts.
 */
export function renderProbe(doc: ProbeDocument, style: Style, columns = DEFAULT_COLUMNS): string {
  const s = doc.software;
  const lines = [
    ...probeAnswer(doc),
    '',
    `CUDA driver ${s.driver}, runtime ${s.runtime} (${s.cudartPath}), NVRTC ${s.nvrtc ?? 'not found'}${s.nvrtcPath ? ` (${s.nvrtcPath})` : ''}`,
  ];
  if (s.nvrtcArchitectures.length) lines.push(`NVRTC architectures: ${s.nvrtcArchitectures.join(' ')}`);
  for (const { facts, bandwidth } of doc.devices) {
    lines.push('', style.bold(`Device ${facts.index}: ${facts.name}`), fitPairs(deviceFacts(facts), columns));
    if (bandwidth) lines.push(bandwidthTable(bandwidth, columns));
  }
  if (doc.peers)
    lines.push(
      '',
      ...peerLines(
        doc.peers,
        doc.devices.map((d) => d.facts.index),
        style,
        columns,
      ),
    );
  return lines.join('\n');
}

/**
 * The answer, first: what each kind of device lets overlap (devices alike share a line), each device's copy rates
 * where they were timed, and whether chunks can pass between devices without the host.
 */
function probeAnswer(doc: ProbeDocument): string[] {
  const kinds = new Map<string, number[]>();
  for (const { facts: d } of doc.devices) {
    const overlap = `${copyEngineMeaning(d.asyncEngineCount)}${d.concurrentKernels ? '' : '; kernels of different streams run one at a time'}`;
    const key = `${d.name}, sm_${d.computeCapability.major}${d.computeCapability.minor}: ${overlap}`;
    kinds.set(key, [...(kinds.get(key) ?? []), d.index]);
  }
  const lines = [...kinds].map(
    ([key, indices]) => `Device${indices.length > 1 ? 's' : ''} ${indices.join(', ')}: ${key}`,
  );
  for (const { facts, bandwidth } of doc.devices)
    if (bandwidth?.length) lines.push(`Device ${facts.index} copies: ${ratesText(bandwidth)}`);
  if (doc.peers && doc.devices.length > 1) lines.push(peerAnswer(doc.peers));
  return lines;
}

/** "pinned H2D 55.4 GB/s, D2H 55.3 GB/s, both at once 99.6 GB/s; pageable H2D 7.5 GB/s, D2H 16.0 GB/s". */
function ratesText(rows: readonly Bandwidth[]): string {
  const name = { h2d: 'H2D', d2h: 'D2H', bidirectional: 'both at once' } as const;
  return (['pinned', 'pageable'] as const)
    .flatMap((memory) => {
      const same = rows.filter((b) => b.hostMemory === memory);
      return same.length
        ? [`${memory} ${same.map((b) => `${name[b.direction]} ${formatRate(b.gbPerSecond)}`).join(', ')}`]
        : [];
    })
    .join('; ');
}

/** Whether a pipeline across the devices hands chunks over device to device, and the fastest copy timed. */
function peerAnswer(peers: Peers): string {
  const staged = peers.matrix.filter((l) => !l.canAccess).map((l) => `${l.from} → ${l.to}`);
  const fastest = [...(peers.bandwidth ?? [])].sort((a, b) => b.gbPerSecond - a.gbPerSecond)[0];
  const rate = fastest
    ? `; fastest copy ${fastest.from} ${fastest.bidirectional ? '⇄' : '→'} ${fastest.to} at ${formatRate(fastest.gbPerSecond)}`
    : '';
  return staged.length
    ? `between devices: no peer access ${staged.join(', ')}: chunks between them go through host memory${rate}`
    : `between devices: peer access every way, so chunks pass device to device without the host${rate}`;
}

const PEER_LEGEND =
  "peer: device to device (NVLink or PCIe) with peer access enabled; rank: the driver's rank of the link, " +
  'lower is faster; atomics: native atomics over it; staged via host: no peer access, the driver copies through host memory.';

/** The matrix of what the driver says of each pair, its legend, and the copies between devices when they were timed. */
function peerLines(peers: Peers, devices: readonly number[], style: Style, columns: number): string[] {
  const lines = [style.bold('Between devices'), peerMatrixTable(peers.matrix, devices, columns), PEER_LEGEND];
  if (peers.bandwidth?.length) lines.push(peerBandwidthTable(peers.bandwidth, columns));
  return lines;
}

/** One cell of the matrix: how a copy from the row's device to the column's goes. */
function peerCell(link: PeerLink): string {
  if (!link.canAccess) return 'staged via host';
  return ['peer', `rank ${link.performanceRank}`, ...(link.nativeAtomics ? ['atomics'] : [])].join(' · ');
}

function peerMatrixTable(matrix: readonly PeerLink[], devices: readonly number[], columns: number): string {
  const cell = (from: number, to: number) => {
    if (to === from) return '—';
    const link = matrix.find((l) => l.from === from && l.to === to);
    return link ? peerCell(link) : 'not probed';
  };
  const layout: Layout = [
    { head: '', cells: devices.map((from) => `from ${from}`) },
    ...devices.map((to): Column => ({ head: `to ${to}`, cells: devices.map((from) => cell(from, to)) })),
  ];
  return fitTable([layout], columns);
}

function peerBandwidthTable(rows: readonly PeerBandwidth[], columns: number): string {
  const full: Layout = [
    {
      head: 'copy',
      cells: rows.map((b) => (b.bidirectional ? `${b.from} ⇄ ${b.to} (both ways at once)` : `${b.from} → ${b.to}`)),
    },
    { head: 'path', cells: rows.map((b) => (b.path === 'peer' ? 'peer' : 'staged via host')) },
    {
      head: 'size',
      align: 'right',
      cells: rows.map((b) => (b.bidirectional ? `${formatBytes(b.bytes)} each way` : formatBytes(b.bytes))),
    },
    { head: 'median', align: 'right', cells: rows.map((b) => formatMs(b.stats.median)) },
    { head: 'noise', align: 'right', cells: rows.map((b) => formatPercent(b.stats.relativeNoise)) },
    { head: 'GB/s', align: 'right', cells: rows.map((b) => formatRate(b.gbPerSecond)) },
  ];
  return fitTable([full, without(full, 'noise'), without(full, 'noise', 'size')], columns);
}

export function copyEngineMeaning(count: number): string {
  if (count === 0) return 'copies cannot overlap kernels';
  if (count === 1) return 'H2D and D2H share one engine: copies overlap kernels but not each other';
  return 'H2D and D2H can run at once, and both overlap kernels';
}

/** A device's facts, each with what it means where that is not plain. */
function deviceFacts(d: DeviceFacts): Array<[string, string]> {
  const yesNo = (b: boolean) => (b ? 'yes' : 'no');
  const pcie = d.pcie
    ? `gen${d.pcie.generation ?? '?'} x${d.pcie.width} (${d.pcie.speed}; max gen${d.pcie.maxGeneration ?? '?'} x${d.pcie.maxWidth})`
    : 'not readable from sysfs';
  return [
    [
      'compute capability',
      `${d.computeCapability.major}.${d.computeCapability.minor} (sm_${d.computeCapability.major}${d.computeCapability.minor})`,
    ],
    ['multiprocessors', `${d.multiprocessors} (${d.maxThreadsPerMultiprocessor} threads each)`],
    ['memory', formatBytes(d.memoryBytes)],
    ['L2 cache', formatBytes(d.l2CacheBytes)],
    ['async engines', `${d.asyncEngineCount}: ${copyEngineMeaning(d.asyncEngineCount)}`],
    ['concurrent kernels', yesNo(d.concurrentKernels)],
    ['GPU overlap', yesNo(d.gpuOverlap)],
    [
      'stream priorities',
      `least ${d.streamPriority.least}, greatest ${d.streamPriority.greatest} (lower is higher priority)`,
    ],
    ['unified addressing', yesNo(d.unifiedAddressing)],
    ['can map host memory', yesNo(d.canMapHostMemory)],
    ['PCI bus id', d.pciBusId],
    ['PCIe link', pcie],
    ['UUID', d.uuid],
  ];
}

function bandwidthTable(rows: readonly Bandwidth[], columns: number): string {
  const label = (b: Bandwidth, long: boolean) =>
    b.direction !== 'bidirectional'
      ? b.direction.toUpperCase()
      : `H2D + D2H at once${long ? ` (${b.pieces} copies each way, ${b.streamsPerDirection} streams per direction)` : ''}`;
  const figures: Layout = [
    { head: 'host memory', cells: rows.map((b) => b.hostMemory) },
    { head: 'size', align: 'right', cells: rows.map((b) => formatBytes(b.bytes)) },
    { head: 'median', align: 'right', cells: rows.map((b) => formatMs(b.stats.median)) },
    { head: 'noise', align: 'right', cells: rows.map((b) => formatPercent(b.stats.relativeNoise)) },
    { head: 'GB/s', align: 'right', cells: rows.map((b) => formatRate(b.gbPerSecond)) },
  ];
  const short: Layout = [{ head: 'copy', cells: rows.map((b) => label(b, false)) }, ...figures];
  return fitTable(
    [[{ head: 'copy', cells: rows.map((b) => label(b, true)) }, ...figures], short, without(short, 'noise', 'size')],
    columns,
  );
}
