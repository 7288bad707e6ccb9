import { describeDevice, softwareVersions } from '../exec/device-facts.js';
import { LibraryOverrideError } from '../cuda/load.js';
import { openNvrtc, type Nvrtc } from '../cuda/nvrtc.js';
import type { PeerFacts } from '../cuda/peer.js';
import { openRuntime } from '../cuda/runtime.js';
import { type CudaPipeError, UsageError } from '../errors.js';
import { withDevicePlan } from '../exec/open.js';
import type { WaitStrategy } from '../exec/wait.js';
import { measureBandwidth, measurePeerBandwidth } from '../measure/bandwidth.js';
import { RepGuard } from '../measure/guard.js';
import { packageVersion } from '../paths.js';
import { bandwidthPlan } from '../plan/build.js';
import { peerBandwidthPlan } from '../plan/devices.js';
import {
  type Bandwidth,
  type PeerBandwidth,
  type PeerLink,
  PROBE_SCHEMA_ID,
  PROBE_VERSION,
  type ProbeDocument,
} from '../result/probe.js';

export interface ProbeOptions {
  /** Device indexes, or every device. Two or more add the peer matrix. */
  readonly devices: readonly number[] | 'all';
  /** Bytes per bandwidth copy; null skips the bandwidth measurement. */
  readonly bandwidthBytes: number | null;
  readonly reps: number;
  readonly wait: WaitStrategy;
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs?: number | undefined;
}

/**
 * What each device is and, when asked, how fast it copies; with two devices or more, what the driver says of each pair.
 */
export async function probe(options: ProbeOptions): Promise<ProbeDocument> {
  const rt = openRuntime();
  const count = rt.deviceCount();
  const devices = selectDevices(options.devices, count);
  const nvrtc = tryNvrtc();
  const entries: ProbeDocument['devices'] = [];
  for (const index of devices) {
    const facts = describeDevice(rt, index);
    let bandwidth: Bandwidth[] | null = null;
    if (options.bandwidthBytes !== null) {
      bandwidth = [];
      for (const hostMemory of ['pinned', 'pageable'] as const) {
        const bytes = options.bandwidthBytes;
        const plan = bandwidthPlan(bytes, hostMemory, index, hostMemory === 'pinned');
        const outcome = await withDevicePlan(plan, [], { wait: options.wait }, (runner) =>
          measureBandwidth(
            runner,
            bytes,
            hostMemory,
            options.reps,
            new RepGuard({ signal: options.signal, timeoutMs: options.timeoutMs }),
          ),
        );
        bandwidth.push(...outcome.value);
      }
    }
    entries.push({ facts, bandwidth });
  }
  const peers =
    devices.length >= 2
      ? {
          peers: {
            matrix: peerMatrix(devices, (a, b) => rt.peer.facts(a, b)),
            bandwidth:
              options.bandwidthBytes === null ? null : await peerCopies(devices, options.bandwidthBytes, options),
          },
        }
      : {};
  return {
    schema: PROBE_SCHEMA_ID,
    version: PROBE_VERSION,
    tool: { name: 'cuda-pipe', version: packageVersion() },
    software: softwareVersions(rt, nvrtc),
    devices: entries,
    ...peers,
  };
}

/**
 * The driver's facts for every ordered pair of `devices`, row by row in their order. Both directions are asked,
 * because peer access and its attributes are per direction. A device is never asked about itself: the driver
 * answers cudaDeviceGetP2PAttribute for one device with cudaErrorInvalidDevice.
 */
export function peerMatrix(devices: readonly number[], facts: (device: number, peer: number) => PeerFacts): PeerLink[] {
  return devices.flatMap((from) =>
    devices
      .filter((to) => to !== from)
      .map((to): PeerLink => {
        // Field by field, so that what the wrapper adds to PeerFacts reaches the document only with a schema change.
        const { canAccess, performanceRank, nativeAtomics } = facts(from, to);
        return { from, to, canAccess, performanceRank, nativeAtomics };
      }),
  );
}

function selectDevices(selection: readonly number[] | 'all', count: number): number[] {
  if (selection === 'all') return Array.from({ length: count }, (_, i) => i);
  const missing = selection.find((index) => index >= count);
  if (missing !== undefined) {
    throw new UsageError(
      `--device ${selection.join(',')}: there is no device ${missing}; this machine has ${count} CUDA device${count === 1 ? '' : 's'} (0 to ${count - 1}).`,
    );
  }
  return [...selection];
}

/** probe reports NVRTC when it is there, and says so when it is not, rather than failing. */
function tryNvrtc(): Nvrtc | null {
  try {
    return openNvrtc();
  } catch (error) {
    // A missing NVRTC is a fact probe reports; a CUDA_PIPE_NVRTC that names the wrong file is a mistake to show.
    if ((error as CudaPipeError).exitCode === 3 && !(error instanceof LibraryOverrideError)) return null;
    throw error;
  }
}

/** Copy rates between every pair of `devices`: each way alone and both ways at once, with peer access where allowed. */
async function peerCopies(devices: readonly number[], bytes: number, options: ProbeOptions): Promise<PeerBandwidth[]> {
  const rows: PeerBandwidth[] = [];
  for (const [i, a] of devices.entries()) {
    for (const b of devices.slice(i + 1)) {
      const outcome = await withDevicePlan(
        peerBandwidthPlan(bytes, a, b),
        [],
        { wait: options.wait },
        (runner, context) =>
          measurePeerBandwidth(
            runner,
            bytes,
            options.reps,
            (from, to) => context.peers.find((p) => p.from === from && p.to === to)?.path ?? 'staged',
            new RepGuard({ signal: options.signal, timeoutMs: options.timeoutMs }),
          ),
      );
      rows.push(...outcome.value);
    }
  }
  return rows;
}
