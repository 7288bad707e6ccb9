import { EVENT_DISABLE_TIMING, EVENT_RECORD_EXTERNAL, STREAM_NON_BLOCKING } from './bindings.js';
import type { Calls } from './calls.js';
import { CUDA_ERROR } from './error.js';
import type { EventHandle, StreamHandle } from './types.js';

/** Streams and events: creating them, ordering work between them, waiting for them, timing them. */
export class CudaStreams {
  private readonly elapsed = new Float32Array(1);

  constructor(private readonly calls: Calls) {}

  create(options: { nonBlocking: boolean; priority?: number }): StreamHandle {
    const flags = options.nonBlocking ? STREAM_NON_BLOCKING : 0;
    return this.calls.pointerOut(
      (o) => this.calls.fn.streamCreateWithPriority(o, flags, options.priority ?? 0),
      'cudaStreamCreateWithPriority',
    ) as StreamHandle;
  }

  destroy(stream: StreamHandle): void {
    this.calls.check(this.calls.fn.streamDestroy(stream), 'cudaStreamDestroy');
  }

  synchronize(stream: StreamHandle, context?: string): void {
    this.calls.check(this.calls.fn.streamSynchronize(stream), 'cudaStreamSynchronize', context);
  }

  /** cudaStreamQuery's raw code: 0 idle, CUDA_ERROR.notReady busy, anything else a failure to attribute. */
  queryCode(stream: StreamHandle): number {
    return this.calls.fn.streamQuery(stream) as number;
  }

  waitEvent(stream: StreamHandle, event: EventHandle): void {
    this.calls.check(this.calls.fn.streamWaitEvent(stream, event, 0), 'cudaStreamWaitEvent');
  }

  createEvent(options: { timing: boolean }): EventHandle {
    const flags = options.timing ? 0 : EVENT_DISABLE_TIMING;
    return this.calls.pointerOut(
      (o) => this.calls.fn.eventCreateWithFlags(o, flags),
      'cudaEventCreateWithFlags',
    ) as EventHandle;
  }

  destroyEvent(event: EventHandle): void {
    this.calls.check(this.calls.fn.eventDestroy(event), 'cudaEventDestroy');
  }

  record(event: EventHandle, stream: StreamHandle): void {
    this.calls.check(this.calls.fn.eventRecord(event, stream), 'cudaEventRecord');
  }

  eventSynchronize(event: EventHandle, context?: string): void {
    this.calls.check(this.calls.fn.eventSynchronize(event), 'cudaEventSynchronize', context);
  }

  /** cudaEventQuery's raw code: 0 done, CUDA_ERROR.notReady pending, anything else a failure. Never blocks. */
  eventQueryCode(event: EventHandle): number {
    return this.calls.fn.eventQuery(event) as number;
  }

  /**
   * cudaEventSynchronize on one of koffi's worker threads: the JS thread stays free (a host function enqueued by
   * the rep can run), and the promise settles with the raw code once the event completed.
   */
  eventSynchronizeOffThread(event: EventHandle): Promise<number> {
    return new Promise((resolve, reject) => {
      this.calls.fn.eventSynchronize.async(event, (error: unknown, code: number) =>
        error ? reject(error) : resolve(code),
      );
    });
  }

  eventDone(event: EventHandle): boolean {
    const code = this.eventQueryCode(event);
    if (code === CUDA_ERROR.notReady) return false;
    this.calls.check(code, 'cudaEventQuery');
    return true;
  }

  elapsedMs(start: EventHandle, end: EventHandle): number {
    this.calls.check(this.calls.fn.eventElapsedTime(this.elapsed, start, end), 'cudaEventElapsedTime');
    return this.elapsed[0] ?? Number.NaN;
  }

  recordThunk(event: EventHandle, stream: StreamHandle): () => number {
    const eventRecord = this.calls.fn.eventRecord;
    return () => eventRecord(event, stream) as number;
  }

  /** A record that a stream capture turns into an event-record node, so the replayed graph records it (for timing). */
  recordExternalThunk(event: EventHandle, stream: StreamHandle): () => number {
    const eventRecordWithFlags = this.calls.fn.eventRecordWithFlags;
    return () => eventRecordWithFlags(event, stream, EVENT_RECORD_EXTERNAL) as number;
  }

  waitThunk(stream: StreamHandle, event: EventHandle): () => number {
    const streamWaitEvent = this.calls.fn.streamWaitEvent;
    return () => streamWaitEvent(stream, event, 0) as number;
  }
}
