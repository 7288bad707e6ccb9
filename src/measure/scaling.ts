import { formatMs, formatPercent, formatRate, formatUsEach, gbPerSecond } from '../format.js';
import { median } from '../quantile.js';
import type { Schedule } from '../plan/types.js';
import type { CrossDevice, PeerPathRecord, Scaling } from '../model/devices.js';
import type { ModeResult } from '../model/mode.js';
import { isSplitTogether } from '../modes.js';

// What several devices in one run bought, from the modes alone: how the split scaled against one device and what
// limited it, and how a pipeline across two devices did against one. Pure, so it is tested on recorded modes.

/** A device's share taking this much longer with every device at once than alone means they contend for something. */
export const CONTENTION = 1.05;
/** Without the gate, a rep whose issue takes this share of its GPU time is issued no faster than it runs. */
export const ISSUE_BOUND = 0.8;
/** Below this share of perfect scaling, the report says what is missing. */
const SCALING_TARGET = 0.9;

/** Each device's own times out of the probes of a schedule that spans devices (one probe per device per rep). */
export function perDeviceTimes(
  schedule: Pick<Schedule, 'probes'>,
  probeMs: readonly number[],
): Array<{ device: number; samplesMs: number[]; medianMs: number }> | null {
  const probes = schedule.probes ?? [];
  if (!probes.length || probes.some((p) => p.device === undefined)) return null;
  return probes.map((probe, k) => {
    const samplesMs = probeMs.filter((_, i) => i % probes.length === k);
    return { device: probe.device as number, samplesMs, medianMs: median(samplesMs) };
  });
}

const copied = (m: Pick<ModeResult, 'bytes'>) => m.bytes.h2d + m.bytes.d2h;

/** The split across devices against the whole input on the first device; null when the run has no split. */
export function scalingOf(
  modes: readonly ModeResult[],
  options: { gated: boolean; issuedOps: number },
): Scaling | null {
  const together = modes.find((m) => isSplitTogether(m.role));
  if (together?.role.kind !== 'split') return null;
  const devices = [...together.role.devices];
  const first = devices[0];
  const one = modes.find(
    (m) => m.role.kind === 'overlapped' && m.device === first && m.role.layout.issue === undefined,
  );
  if (!one) return null;
  const n = devices.length;
  const togetherMs = together.stats.median;
  const perDevice = (together.perDevice ?? []).map((times) => {
    const alone = modes.find((m) => m.role.kind === 'split' && m.role.alone === times.device);
    const bytes = alone ? copied(alone) : copied(together) / n;
    return {
      device: times.device,
      bytes,
      togetherMs: times.medianMs,
      gbPerSecond: gbPerSecond(bytes, times.medianMs),
      aloneMs: alone?.stats.median ?? null,
      aloneGbPerSecond: alone ? gbPerSecond(bytes, alone.stats.median) : null,
    };
  });
  const speedup = one.stats.median / togetherMs;
  const hostIssueMs = median(together.hostIssueMs);
  const scaling = {
    devices,
    speedup,
    efficiency: speedup / n,
    perDevice,
    links: linksOf(modes, one),
    oneDevice: {
      mode: one.id,
      device: one.device,
      medianMs: one.stats.median,
      gbPerSecond: gbPerSecond(copied(one), one.stats.median),
    },
    together: {
      mode: together.id,
      medianMs: togetherMs,
      gbPerSecond: gbPerSecond(copied(together), togetherMs),
      hostIssueMs,
      issuedOps: options.issuedOps,
    },
  };
  return { ...scaling, ...scalingLimit(scaling, options.gated) };
}

/** The links alone and all at once, from the split-link modes. */
function linksOf(modes: readonly ModeResult[], one: ModeResult): Scaling['links'] {
  const together = modes.find((m) => m.role.kind === 'split-link' && m.role.alone === undefined);
  if (together?.role.kind !== 'split-link') return null;
  const togetherGbPerSecond = gbPerSecond(copied(together), together.stats.median);
  return {
    perDevice: together.role.devices.map((device) => {
      const alone = modes.find((m) => m.role.kind === 'split-link' && m.role.alone === device);
      const own = together.perDevice?.find((d) => d.device === device);
      return {
        device,
        aloneGbPerSecond: alone ? gbPerSecond(copied(alone), alone.stats.median) : null,
        togetherGbPerSecond: alone && own ? gbPerSecond(copied(alone), own.medianMs) : null,
      };
    }),
    togetherGbPerSecond,
    ceiling: togetherGbPerSecond / gbPerSecond(copied(one), one.stats.median),
  };
}

function scalingLimit(s: Omit<Scaling, 'limit' | 'why'>, gated: boolean): Pick<Scaling, 'limit' | 'why'> {
  const n = s.devices.length;
  const issueShare = s.together.hostIssueMs / s.together.medianMs;
  if (!gated && issueShare >= ISSUE_BOUND) {
    return {
      limit: 'host issue',
      why:
        `issuing one rep for ${n} devices took ${formatMs(s.together.hostIssueMs)} on the one host thread ` +
        `(${s.together.issuedOps} calls, ${formatUsEach(s.together.hostIssueMs, s.together.issuedOps)}), ` +
        `${formatPercent(issueShare, 0)} of the rep's GPU time: the host issues no faster than the GPUs run`,
    };
  }
  const measured = s.perDevice.filter((d) => d.aloneMs !== null);
  const worst = measured.reduce((w, d) => Math.max(w, d.togetherMs / (d.aloneMs as number)), 0);
  if (worst >= CONTENTION) {
    const rates = (pick: (d: (typeof measured)[number]) => number) =>
      measured.map((d) => `GPU ${d.device} ${formatRate(pick(d))}`).join(', ');
    const aloneSum = s.links?.perDevice.reduce((sum, d) => sum + (d.aloneGbPerSecond ?? 0), 0) ?? 0;
    const links =
      s.links && aloneSum
        ? `; the links, both ways at once, move ${formatRate(aloneSum)} added up alone but ${formatRate(s.links.togetherGbPerSecond)} all at once, ` +
          `which caps this split at ${s.links.ceiling.toFixed(2)}× one device's pipeline`
        : '';
    return {
      limit: 'memory system',
      why:
        `each device's share took up to ${formatPercent(worst - 1, 0)} longer with all ${n} at once than alone ` +
        `(alone: ${rates((d) => d.aloneGbPerSecond as number)}; at once: ${rates((d) => d.gbPerSecond)})${links}: ` +
        "the devices share the host's memory system or PCIe root, which moves less than their links added up",
    };
  }
  if (s.efficiency < SCALING_TARGET) {
    return {
      limit: 'share size',
      why:
        `each device ran its share at its speed alone (within ${formatPercent(CONTENTION - 1, 0)}); what is missing from ${n}× ` +
        "is the shorter pipeline each device runs: filling and draining a share is a larger part of its time than of the whole input's",
    };
  }
  return {
    limit: 'none',
    why: `each device ran its share at its speed alone, and the split scaled to ${formatPercent(s.efficiency, 0)} of ${n}×`,
  };
}

/** The pipeline across two devices against the serial baseline and the same layout on its first device. */
export function crossDeviceOf(modes: readonly ModeResult[], peers: readonly PeerPathRecord[]): CrossDevice | null {
  const mode = modes.find((m) => m.role.kind === 'cross-device');
  if (mode?.role.kind !== 'cross-device') return null;
  const { from, to } = mode.role;
  const serial = modes.find((m) => m.role.kind === 'serial' && m.device === from);
  if (!serial) return null;
  const one = modes.find((m) => m.role.kind === 'overlapped' && m.device === from && m.role.layout.issue === undefined);
  const peer = modes.find((m) => m.role.kind === 'peer' && m.role.from === from && m.role.to === to);
  const path = peers.find((p) => p.from === from && p.to === to)?.path ?? 'staged';
  return {
    mode: mode.id,
    from,
    to,
    path,
    medianMs: mode.stats.median,
    serialMs: serial.stats.median,
    speedup: serial.stats.median / mode.stats.median,
    oneDeviceMs: one?.stats.median ?? null,
    peerCopy: peer?.bytes.peer
      ? {
          bytes: peer.bytes.peer,
          medianMs: peer.stats.median,
          gbPerSecond: gbPerSecond(peer.bytes.peer, peer.stats.median),
        }
      : null,
  };
}
