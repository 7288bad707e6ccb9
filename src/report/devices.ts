import { formatBytes, formatMs, formatPercent, formatRate, formatUsEach } from '../format.js';
import type { RunResult } from '../result/schema.js';

// What a run over several devices adds to every report: how the split scaled and why, and how the pipeline across
// two devices did. Drawn from the Result's `scaling` and `crossDevice` sections alone.

const speedup = (x: number) => `${x.toFixed(2)}×`;

/** Indented lines under a heading; empty for a one-device run. */
export function devicesLines(result: Pick<RunResult, 'scaling' | 'crossDevice' | 'modes'>): string[] {
  return [...scalingLines(result), ...crossDeviceLines(result)];
}

function scalingLines({ scaling, modes }: Pick<RunResult, 'scaling' | 'modes'>): string[] {
  if (!scaling) return [];
  const n = scaling.devices.length;
  const together = modes.find((m) => m.id === scaling.together.mode);
  const layout =
    together?.role.kind === 'split'
      ? `${together.role.layout.chunks} chunks × ${together.role.layout.streams} streams on each`
      : 'the layout on each';
  const issue = scaling.together;
  return [
    `several GPUs (${scaling.devices.join(', ')}), the input split across them, ${layout}:`,
    `  one device (GPU ${scaling.oneDevice.device}, the whole input): ${formatMs(scaling.oneDevice.medianMs)}, ${formatRate(scaling.oneDevice.gbPerSecond)}`,
    `  all ${n} at once: ${formatMs(issue.medianMs)}, ${formatRate(issue.gbPerSecond)} together: ` +
      `${speedup(scaling.speedup)} one device, ${formatPercent(scaling.efficiency, 0)} scaling efficiency`,
    ...scaling.perDevice.map(
      (d) =>
        `  GPU ${d.device}: its share (${formatBytes(d.bytes)} copied) in ${formatMs(d.togetherMs)} at once, ${formatRate(d.gbPerSecond)}` +
        (d.aloneMs === null ? '' : `; alone ${formatMs(d.aloneMs)}, ${formatRate(d.aloneGbPerSecond ?? 0)}`),
    ),
    ...(scaling.links
      ? [
          `  links, each share both ways at once: alone ${scaling.links.perDevice.map((d) => `GPU ${d.device} ${d.aloneGbPerSecond === null ? '?' : formatRate(d.aloneGbPerSecond)}`).join(', ')}; ` +
            `all at once ${formatRate(scaling.links.togetherGbPerSecond)}, ${speedup(scaling.links.ceiling)} one device's pipeline rate (the most a copy-bound split can scale to)`,
        ]
      : []),
    `  host issue: ${formatMs(issue.hostIssueMs)} to issue a rep for every device from one thread (${issue.issuedOps} calls, ` +
      `${formatUsEach(issue.hostIssueMs, issue.issuedOps)})`,
    `  limit: ${scaling.limit}: ${scaling.why}`,
  ];
}

function crossDeviceLines({ crossDevice: c }: Pick<RunResult, 'crossDevice'>): string[] {
  if (!c) return [];
  const path =
    c.path === 'peer'
      ? 'peer access, device to device'
      : 'staged through host memory (the driver allows no peer access between them)';
  return [
    `across GPUs ${c.from} → ${c.to}, each chunk handed over by a peer copy (${path}):`,
    `  ${formatMs(c.medianMs)}: ${speedup(c.speedup)} serial (${formatMs(c.serialMs)})` +
      (c.oneDeviceMs === null
        ? ''
        : `, ${speedup(c.oneDeviceMs / c.medianMs)} the same layout on GPU ${c.from} alone (${formatMs(c.oneDeviceMs)})`),
    ...(c.peerCopy
      ? [
          `  the handed-over buffers copied whole, alone: ${formatBytes(c.peerCopy.bytes)} in ${formatMs(c.peerCopy.medianMs)}, ${formatRate(c.peerCopy.gbPerSecond)}`,
        ]
      : []),
  ];
}
