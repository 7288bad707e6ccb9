import { type Cublas, type CublasHandle, DEFAULT_WORKSPACE_BYTES, openCublas } from './cublas.js';
import type { DevicePtr, StreamHandle } from '../../cuda/types.js';
import type { IssueSite, KindRuntime, KindRuntimeModule, OpenContext, Thunk } from '../api/index.js';
import { columnMajorCall, productCount, productRows } from '../blas/column-major.js';
import type { GemmOp, GemmOperand } from './spec.js';

// A gemm op on the device: libcublas, loaded once per process, and one cuBLAS handle per stream, each with its own
// workspace, made the first time a schedule binds a gemm op on that stream, so that a graph capture allocates nothing
// and two streams never share scratch memory. Handles and workspaces go with the run's clean-up, before their streams.

/** An operand's element offset in its device buffer: a chunked one at the chunk's first item, a resident one at 0. */
const offsetOf = (operand: GemmOperand, deviceFirst: number) =>
  operand.itemSize === null ? 0 : deviceFirst * operand.itemSize;

/** What the runtime calls of libcublas: a test passes a fake. */
export type CublasCalls = Pick<Cublas, 'create' | 'destroy' | 'record' | 'failure'>;

export class GemmRuntime implements KindRuntime<GemmOp> {
  private readonly handles = new Map<string, CublasHandle>();

  constructor(
    private readonly cublas: CublasCalls,
    private readonly context: OpenContext<GemmOp>,
  ) {}

  private handle(site: IssueSite): CublasHandle {
    const key = `${site.device}:${site.stream}`;
    const known = this.handles.get(key);
    if (known !== undefined) return known;
    const { rt, cleanup } = this.context;
    const { cublas } = this;
    const handle = site.onDevice(() => {
      const workspace = rt.memory.malloc(DEFAULT_WORKSPACE_BYTES, `cuBLAS workspace for a stream of ${site.schedule}`);
      cleanup.push(() => rt.memory.free(workspace));
      const made = cublas.create(site.stream as StreamHandle, workspace, DEFAULT_WORKSPACE_BYTES);
      cleanup.push(() => cublas.destroy(made));
      return made;
    });
    this.handles.set(key, handle);
    return handle;
  }

  /**
   * One product of the op: cublasGemmEx, prebuilt, its operands at their chunk's offsets (product `index` of the op's
   * items).
   */
  private product(op: GemmOp, site: IssueSite, index: number): Thunk {
    const { cublas } = this;
    const { operands, layouts: _, ...call } = columnMajorCall(op.spec, productRows(op));
    const [a, b, c] = operands.map((o) =>
      site.address(op.spec[o].buffer, offsetOf(op.spec[o], op.deviceFirst + index)),
    ) as [DevicePtr, DevicePtr, DevicePtr];
    const record = cublas.record(
      this.handle(site),
      { ...call, alpha: op.spec.alpha, beta: op.spec.beta, dtype: op.spec.dtype, cFloat32: op.spec.cFloat32 },
      a,
      b,
      c,
    );
    this.context.cleanup.push(() => record.free());
    const { launch } = record;
    const context = `gemm ${op.gemm}: ${record.describe}`;
    // cuBLAS answers with a cublasStatus_t, not a cudaError_t: a failure is thrown here, naming the op, and the
    // runner's catch around the issue loop (or the graph capture's) reports it.
    return () => {
      const status = launch();
      if (status !== 0) throw cublas.failure(status, 'cublasGemmEx', context);
      return 0;
    };
  }

  issue(op: GemmOp, site: IssueSite) {
    const products = Array.from({ length: productCount(op) }, (_, i) => this.product(op, site, i));
    const [only] = products;
    if (products.length === 1 && only) return { issue: only, hostTag: null };
    // The first failure stops the rest, as one op's would.
    return {
      issue: () => {
        for (const product of products) {
          const status = product();
          if (status !== 0) return status;
        }
        return 0;
      },
      hostTag: null,
    };
  }
}

/** libcublas only where a gemm runs: a missing one is named when the run opens, before anything is allocated. */
export const runtime: KindRuntimeModule<GemmOp> = {
  load: () => void openCublas(),
  open: (context) => new GemmRuntime(openCublas(), context),
};
