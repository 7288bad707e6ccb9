import Table from 'cli-table3';
import { formatBytes, formatMs, formatPercent, formatRate } from '../format.js';
import type { Bandwidth, PeerBandwidth, PeerLink, Peers, ProbeDocument } from '../result/probe.js';
import type { DeviceFacts } from '../result/schema.js';
import type { Style } from './style.js';

export function renderProbe(doc: ProbeDocument, style: Style): string {
  const s = doc.software;
  const lines = [`CUDA driver ${s.driver}, runtime ${s.runtime} (${s.cudartPath}), NVRTC ${s.nvrtc ?? 'not found'}${s.nvrtcPath ? ` (${s.nvrtcPath})` : ''}`];
  if (s.nvrtcArchitectures.length) lines.push(`NVRTC architectures: ${s.nvrtcArchitectures.join(' ')}`);
  for (const { facts, bandwidth } of doc.devices) {
    lines.push('', style.bold(`Device ${facts.index}: ${facts.name}`), deviceTable(facts));
    if (bandwidth) lines.push(bandwidthTable(bandwidth));
  }
  if (doc.peers)
    lines.push(
      '',
      ...peerLines(
        doc.peers,
        doc.devices.map((d) => d.facts.index),
        style,
      ),
    );
  return lines.join('\n');
}

const PEER_LEGEND =
  "peer: device to device (NVLink or PCIe) with peer access enabled; rank: the driver's rank of the link, " +
  'lower is faster; atomics: native atomics over it; staged via host: no peer access, the driver copies through host memory.';

/** The matrix of what the driver says of each pair, its legend, and the copies between devices when they were timed. */
function peerLines(peers: Peers, devices: readonly number[], style: Style): string[] {
  const lines = [style.bold('Between devices'), peerMatrixTable(peers.matrix, devices), PEER_LEGEND];
  if (peers.bandwidth?.length) lines.push(peerBandwidthTable(peers.bandwidth));
  return lines;
}

/** One cell of the matrix: how a copy from the row's device to the column's goes. */
function peerCell(link: PeerLink): string {
  if (!link.canAccess) return 'staged via host';
  return ['peer', `rank ${link.performanceRank}`, ...(link.nativeAtomics ? ['atomics'] : [])].join(' · ');
}

function peerMatrixTable(matrix: readonly PeerLink[], devices: readonly number[]): string {
  const table = new Table({ head: ['', ...devices.map((to) => `to ${to}`)], style: { head: [], border: [] } });
  for (const from of devices) {
    table.push([
      `from ${from}`,
      ...devices.map((to) => {
        if (to === from) return '—';
        const link = matrix.find((l) => l.from === from && l.to === to);
        return link ? peerCell(link) : 'not probed';
      }),
    ]);
  }
  return table.toString();
}

function peerBandwidthTable(rows: readonly PeerBandwidth[]): string {
  const table = new Table({
    head: ['copy', 'path', 'size', 'median', 'noise', 'GB/s'],
    style: { head: [], border: [] },
    colAligns: ['left', 'left', 'right', 'right', 'right', 'right'],
  });
  for (const b of rows) {
    const copy = b.bidirectional ? `${b.from} ⇄ ${b.to} (both ways at once)` : `${b.from} → ${b.to}`;
    const size = b.bidirectional ? `${formatBytes(b.bytes)} each way` : formatBytes(b.bytes);
    table.push([copy, b.path === 'peer' ? 'peer' : 'staged via host', size, formatMs(b.stats.median), formatPercent(b.stats.relativeNoise), formatRate(b.gbPerSecond)]);
  }
  return table.toString();
}

export function copyEngineMeaning(count: number): string {
  if (count === 0) return 'copies cannot overlap kernels';
  if (count === 1) return 'H2D and D2H share one engine: copies overlap kernels but not each other';
  return 'H2D and D2H can run at once, and both overlap kernels';
}

function deviceTable(d: DeviceFacts): string {
  const table = new Table({ style: { head: [], border: [] } });
  const yesNo = (b: boolean) => (b ? 'yes' : 'no');
  const pcie = d.pcie ? `gen${d.pcie.generation ?? '?'} x${d.pcie.width} (${d.pcie.speed}; max gen${d.pcie.maxGeneration ?? '?'} x${d.pcie.maxWidth})` : 'not readable from sysfs';
  table.push(
    { 'compute capability': `${d.computeCapability.major}.${d.computeCapability.minor} (sm_${d.computeCapability.major}${d.computeCapability.minor})` },
    { multiprocessors: `${d.multiprocessors} (${d.maxThreadsPerMultiprocessor} threads each)` },
    { memory: formatBytes(d.memoryBytes) },
    { 'L2 cache': formatBytes(d.l2CacheBytes) },
    { 'async engines': `${d.asyncEngineCount}: ${copyEngineMeaning(d.asyncEngineCount)}` },
    { 'concurrent kernels': yesNo(d.concurrentKernels) },
    { 'GPU overlap': yesNo(d.gpuOverlap) },
    { 'stream priorities': `least ${d.streamPriority.least}, greatest ${d.streamPriority.greatest} (lower is higher priority)` },
    { 'unified addressing': yesNo(d.unifiedAddressing) },
    { 'can map host memory': yesNo(d.canMapHostMemory) },
    { 'PCI bus id': d.pciBusId },
    { 'PCIe link': pcie },
    { UUID: d.uuid },
  );
  return table.toString();
}

function bandwidthTable(rows: readonly Bandwidth[]): string {
  const table = new Table({
    head: ['copy', 'host memory', 'size', 'median', 'noise', 'GB/s'],
    style: { head: [], border: [] },
    colAligns: ['left', 'left', 'right', 'right', 'right', 'right'],
  });
  const label = (b: Bandwidth) =>
    b.direction === 'bidirectional' ? `H2D + D2H at once (${b.pieces} copies each way, ${b.streamsPerDirection} streams per direction)` : b.direction.toUpperCase();
  for (const b of rows) {
    table.push([label(b), b.hostMemory, formatBytes(b.bytes), formatMs(b.stats.median), formatPercent(b.stats.relativeNoise), formatRate(b.gbPerSecond)]);
  }
  return table.toString();
}
