import { CAPTURE_MODE } from './bindings.js';
import type { Calls } from './calls.js';
import type { GraphExecHandle, GraphHandle, StreamHandle } from './types.js';

/** Stream capture into a CUDA graph, instantiation, and replay. */
export class CudaGraphs {
  constructor(private readonly calls: Calls) {}

  beginCapture(stream: StreamHandle, mode: keyof typeof CAPTURE_MODE = 'global'): void {
    this.calls.check(this.calls.fn.streamBeginCapture(stream, CAPTURE_MODE[mode]), 'cudaStreamBeginCapture');
  }

  endCapture(stream: StreamHandle): GraphHandle {
    return this.calls.pointerOut(
      (o) => this.calls.fn.streamEndCapture(stream, o),
      'cudaStreamEndCapture',
    ) as GraphHandle;
  }

  instantiate(graph: GraphHandle): GraphExecHandle {
    return this.calls.pointerOut(
      (o) => this.calls.fn.graphInstantiate(o, graph, 0),
      'cudaGraphInstantiate',
    ) as GraphExecHandle;
  }

  launchThunk(exec: GraphExecHandle, stream: StreamHandle): () => number {
    const graphLaunch = this.calls.fn.graphLaunch;
    return () => graphLaunch(exec, stream) as number;
  }

  destroyExec(exec: GraphExecHandle): void {
    this.calls.check(this.calls.fn.graphExecDestroy(exec), 'cudaGraphExecDestroy');
  }

  destroy(graph: GraphHandle): void {
    this.calls.check(this.calls.fn.graphDestroy(graph), 'cudaGraphDestroy');
  }
}
