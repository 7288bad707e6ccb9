import { P2P_ATTRIBUTE, PEER_ACCESS_ALREADY_ENABLED } from './bindings.js';
import type { Calls } from './calls.js';
import type { DevicePtr, StreamHandle } from './types.js';

/** What the driver says of one ordered pair of devices. */
export interface PeerFacts {
  /** cudaDeviceCanAccessPeer: `device` can map `peer`'s memory, so copies go device to device. */
  readonly canAccess: boolean;
  /** cudaDevP2PAttrPerformanceRank: lower is faster; 0 where there is no direct path. */
  readonly performanceRank: number;
  readonly nativeAtomics: boolean;
}

/**
 * Copies between devices. A peer copy works between any two devices: with peer access enabled it goes device to
 * device (NVLink or PCIe peer to peer); without it the driver stages it through host memory.
 */
export class CudaPeer {
  constructor(
    private readonly calls: Calls,
    private readonly setDevice: (device: number) => void,
  ) {}

  facts(device: number, peer: number): PeerFacts {
    const attribute = (name: keyof typeof P2P_ATTRIBUTE) =>
      this.calls.intOut(
        (o) => this.calls.fn.deviceGetP2PAttribute(o, P2P_ATTRIBUTE[name], device, peer),
        'cudaDeviceGetP2PAttribute',
        `devices ${device} and ${peer}`,
      );
    const canAccess =
      this.calls.intOut(
        (o) => this.calls.fn.deviceCanAccessPeer(o, device, peer),
        'cudaDeviceCanAccessPeer',
        `devices ${device} and ${peer}`,
      ) === 1;
    return {
      canAccess,
      performanceRank: canAccess ? attribute('performanceRank') : 0,
      nativeAtomics: canAccess && attribute('nativeAtomics') === 1,
    };
  }

  /**
   * Lets `device` reach `peer`'s memory, where the driver allows it; false where it does not (copies are then staged
   * through the host). Access lasts as long as the process: enabling it again is not an error. Leaves `device` current.
   */
  enable(device: number, peer: number): boolean {
    if (!this.facts(device, peer).canAccess) return false;
    this.setDevice(device);
    const code = this.calls.fn.deviceEnablePeerAccess(peer, 0) as number;
    if (code !== 0 && code !== PEER_ACCESS_ALREADY_ENABLED)
      this.calls.check(code, 'cudaDeviceEnablePeerAccess', `device ${device} to ${peer}`);
    return true;
  }

  /** An async copy between devices bound once; the closure returns the raw cudaError_t for the hot loop. */
  copyThunk(
    dst: DevicePtr,
    dstDevice: number,
    src: DevicePtr,
    srcDevice: number,
    bytes: number,
    stream: StreamHandle,
  ): () => number {
    const memcpyPeerAsync = this.calls.fn.memcpyPeerAsync;
    return () => memcpyPeerAsync(dst, dstDevice, src, srcDevice, bytes, stream) as number;
  }
}
