import type { GpuEvent } from '../../src/traces/events.js';

/**
 * A GPU op as a trace format's parser gives it, for tests of the analysis core: a kernel on stream 7 of device 0,
 * named `k`, with no bytes, no correlation, no issue time and not on the default stream, unless `fields` says.
 */
export function gpuEvent(fields: Partial<GpuEvent> & Pick<GpuEvent, 'start' | 'end'>): GpuEvent {
  return {
    device: 0,
    stream: '7',
    kind: 'kernel',
    bytes: null,
    direction: null,
    hostMemory: null,
    name: 'k',
    correlation: null,
    communication: false,
    issued: null,
    defaultStream: false,
    ...fields,
  };
}
