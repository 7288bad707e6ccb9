import { type NativeBlock, nativeBlock } from '../../cuda/ffi.js';
import type { DevicePtr, HostPtr, StreamHandle } from '../../cuda/types.js';
import { UsageError } from '../../errors.js';
import type { IssuedOp, IssueSite, KindRuntime, KindRuntimeModule, OpenContext, Thunk } from '../api/index.js';
import {
  COMPUTE_32F,
  type CublasLtBinding,
  cublasLtFailure,
  DATA_TYPE,
  EPILOGUE,
  HEURISTIC_RESULT,
  MATMUL_DESC,
  matmulTypes,
  OPERATION,
  openCublasLt,
  PREFERENCE,
} from './cublaslt.js';
import { type ColumnMajorCall, columnMajorCall, productCount, productRows } from '../blas/column-major.js';
import type { MatmulOp, MatmulOperand } from './spec.js';

// A matmul op on the device: libcublasLt, loaded once per process, one cuBLASLt handle per device of the run, and per
// product shape a prepared call (the matmul descriptor with its epilogue and bias, the three layouts, and the
// algorithm cuBLASLt's heuristic ranks first, kept in native memory), made the first time a schedule binds such an
// op, outside the timed loop. Each stream has its own workspace, so a graph capture allocates nothing and two streams
// never share scratch memory. Everything made goes to the run's clean-up as it is made, so it is released in reverse.

/** What a GPU-tuned workspace needs: cuBLAS asks for 32 MiB per handle on Hopper, as the gemm stage gives it. */
export const WORKSPACE_BYTES = 32 << 20;

/** An operand's element offset in its device buffer: a chunked one at the item's, a resident one at 0. */
const offsetOf = (operand: MatmulOperand, item: number) => (operand.itemSize === null ? 0 : item * operand.itemSize);

/** The largest power of two up to 256 that divides a device address: the alignment cuBLASLt's heuristic is told. */
function alignment(address: bigint): number {
  let bytes = 256;
  while (bytes > 1 && address % BigInt(bytes) !== 0n) bytes /= 2;
  return bytes;
}

/** The alignments of a product's operands in cuBLASLt's order: its A is our B, its B our A, its C and D our C. */
interface Alignments {
  readonly a: number;
  readonly b: number;
  readonly c: number;
}

/** A product shape bound once: its descriptor, layouts and algorithm, and how failures name them. */
interface Prepared {
  readonly desc: bigint;
  readonly layouts: { readonly a: bigint; readonly b: bigint; readonly c: bigint };
  readonly algo: HostPtr;
  readonly scalars: { readonly alpha: HostPtr; readonly beta: HostPtr };
  readonly describe: string;
}

/** "bf16 4096×512×4096 (A T, B N), epilogue bias-relu": a product as messages name it, in cuBLASLt's terms. */
function describeProduct(op: MatmulOp, call: Omit<ColumnMajorCall, 'operands'>): string {
  const { spec } = op;
  const types = spec.dtype === 'fp8' ? `fp8 e4m3 → ${spec.output}` : spec.dtype;
  return `${types} ${call.m}×${call.n}×${call.k} (A ${call.transA}, B ${call.transB}), epilogue ${spec.epilogue}`;
}

/** "cuBLASLt 13.1.2 (/usr/local/cuda/lib64/libcublasLt.so.13)": which library answered, from CUBLASLT_VERSION. */
function libraryName(lt: Pick<CublasLtBinding, 'version' | 'path'>): string {
  const version = lt.version();
  return `cuBLASLt ${Math.floor(version / 10000)}.${Math.floor(version / 100) % 100}.${version % 100} (${lt.path})`;
}

/** The algorithm a prepared product runs, as its failures name it. */
const describeAlgorithm = (workspace: number, waves: number): string =>
  `algorithm: the heuristic's first (workspace ${workspace} bytes, ${waves.toFixed(2)} waves)`;

class MatmulRuntime implements KindRuntime<MatmulOp> {
  private readonly handles = new Map<number, bigint>();
  private readonly workspaces = new Map<string, DevicePtr>();
  private readonly prepared = new Map<string, Prepared>();
  private readonly out = new BigUint64Array(1);

  constructor(
    private readonly lt: CublasLtBinding,
    private readonly context: OpenContext<MatmulOp>,
  ) {}

  private check(status: number, api: string, context?: string): void {
    if (status !== 0) throw cublasLtFailure(this.lt, status, api, context);
  }

  /**
   * A cuBLASLt object made by `<kind>Create` into the out-parameter, released by `<kind>Destroy` with the run's
   * clean-up, whose failure is reported as any other (it means the library's state is not what this runtime made).
   */
  private make(
    kind: string,
    create: (out: BigUint64Array) => number,
    destroy: (made: bigint) => number,
    context?: string,
  ): bigint {
    this.out[0] = 0n;
    this.check(create(this.out), `${kind}Create`, context);
    const made = this.out[0] ?? 0n;
    this.context.cleanup.push(() => this.check(destroy(made), `${kind}Destroy`, context));
    return made;
  }

  /** Host memory for what cuBLASLt reads by pointer, freed with the run's clean-up. */
  private block(bytes: number): NativeBlock {
    const block = nativeBlock(bytes);
    this.context.cleanup.push(() => block.free());
    return block;
  }

  private handle(site: IssueSite): bigint {
    const known = this.handles.get(site.device);
    if (known !== undefined) return known;
    const made = site.onDevice(() =>
      this.make(
        'cublasLt',
        (o) => this.lt.create(o),
        (h) => this.lt.destroy(h),
      ),
    );
    this.handles.set(site.device, made);
    return made;
  }

  private workspace(site: IssueSite): DevicePtr {
    const key = `${site.device}:${site.stream}`;
    const known = this.workspaces.get(key);
    if (known !== undefined) return known;
    const { rt, cleanup } = this.context;
    const made = site.onDevice(() =>
      rt.memory.malloc(WORKSPACE_BYTES, `cuBLASLt workspace for a stream of ${site.schedule}`),
    );
    cleanup.push(() => rt.memory.free(made));
    this.workspaces.set(key, made);
    return made;
  }

  /** The descriptor of an op's product: compute and scale 32F, the transposes, the epilogue and its bias. */
  private descriptor(op: MatmulOp, call: Omit<ColumnMajorCall, 'operands'>, site: IssueSite, what: string): bigint {
    const { lt } = this;
    const desc = this.make(
      'cublasLtMatmulDesc',
      (o) => lt.matmulDescCreate(o, COMPUTE_32F, DATA_TYPE.R_32F),
      (d) => lt.matmulDescDestroy(d),
      what,
    );
    const set = (attribute: keyof typeof MATMUL_DESC, bytes: number, write: (view: DataView) => void) => {
      const value = this.block(bytes);
      write(value.view);
      this.check(
        lt.matmulDescSetAttribute(desc, MATMUL_DESC[attribute], value.address, bytes),
        'cublasLtMatmulDescSetAttribute',
        `${attribute} of ${what}`,
      );
    };
    set('TRANSA', 4, (v) => v.setInt32(0, OPERATION[call.transA], true));
    set('TRANSB', 4, (v) => v.setInt32(0, OPERATION[call.transB], true));
    set('EPILOGUE', 4, (v) => v.setUint32(0, EPILOGUE[op.spec.epilogue], true));
    const { bias } = op.spec;
    if (bias) {
      set('BIAS_POINTER', 8, (v) => v.setBigUint64(0, site.address(bias.buffer, 0), true));
      set('BIAS_DATA_TYPE', 4, (v) => v.setInt32(0, matmulTypes(op.spec.dtype, op.spec.output).output, true));
    }
    return desc;
  }

  /**
   * A product shape, prepared once per step, row count, device and operand alignments: the descriptor (which holds
   * the device's bias address), the layouts, and the heuristic's first algorithm for them within the workspace. The
   * heuristic assumes 256-byte aligned operands unless told, and a chunk's rows may start less aligned than that (a
   * row of 1,000 bf16 values is 2,000 bytes), so each product tells it how aligned its own operands are, as PyTorch
   * does.
   */
  private prepare(op: MatmulOp, site: IssueSite, alignments: Alignments): Prepared {
    const rows = productRows(op);
    const key = `${op.matmul}:${rows}:${site.device}:${alignments.a}:${alignments.b}:${alignments.c}`;
    const known = this.prepared.get(key);
    if (known) return known;
    const { lt } = this;
    const { operands: _, ...call } = columnMajorCall(op.spec, rows);
    const what = `matmul ${op.matmul}, m ${rows}`;
    const types = matmulTypes(op.spec.dtype, op.spec.output);
    const desc = this.descriptor(op, call, site, what);
    const layout = (type: number, shape: { rows: number; cols: number; ld: number }) =>
      this.make(
        'cublasLtMatrixLayout',
        (o) => lt.matrixLayoutCreate(o, type, shape.rows, shape.cols, shape.ld),
        (l) => lt.matrixLayoutDestroy(l),
        what,
      );
    const layouts = {
      a: layout(types.input, call.layouts.a),
      b: layout(types.input, call.layouts.b),
      c: layout(types.output, call.layouts.c),
    };
    const preference = this.make(
      'cublasLtMatmulPreference',
      (o) => lt.preferenceCreate(o),
      (p) => lt.preferenceDestroy(p),
      what,
    );
    const prefer = (attribute: keyof typeof PREFERENCE, bytes: 4 | 8, value: number) => {
      const block = this.block(bytes);
      if (bytes === 8) block.view.setBigUint64(0, BigInt(value), true);
      else block.view.setUint32(0, value, true);
      this.check(
        lt.preferenceSetAttribute(preference, PREFERENCE[attribute], block.address, bytes),
        'cublasLtMatmulPreferenceSetAttribute',
        `${attribute} of ${what}`,
      );
    };
    prefer('MAX_WORKSPACE_BYTES', 8, WORKSPACE_BYTES);
    prefer('MIN_ALIGNMENT_A_BYTES', 4, alignments.a);
    prefer('MIN_ALIGNMENT_B_BYTES', 4, alignments.b);
    prefer('MIN_ALIGNMENT_C_BYTES', 4, alignments.c);
    prefer('MIN_ALIGNMENT_D_BYTES', 4, alignments.c);
    const result = this.block(HEURISTIC_RESULT.bytes);
    const returned = [0];
    const handle = this.handle(site);
    this.check(
      site.onDevice(() =>
        lt.algoGetHeuristic(
          handle,
          desc,
          layouts.a,
          layouts.b,
          layouts.c,
          layouts.c,
          preference,
          1,
          result.address,
          returned,
        ),
      ),
      'cublasLtMatmulAlgoGetHeuristic',
      what,
    );
    const state = result.view.getInt32(HEURISTIC_RESULT.state, true);
    if ((returned[0] ?? 0) < 1 || state !== 0) {
      // No algorithm is CUBLAS_STATUS_NOT_SUPPORTED, as cublasLtMatmul would answer without one.
      throw cublasLtFailure(
        lt,
        state === 0 ? 15 : state,
        'cublasLtMatmulAlgoGetHeuristic',
        `${what}: ${libraryName(lt)} has no algorithm for ${describeProduct(op, call)}`,
      );
    }
    const algorithm = describeAlgorithm(
      Number(result.view.getBigUint64(HEURISTIC_RESULT.workspaceSize, true)),
      result.view.getFloat32(HEURISTIC_RESULT.wavesCount, true),
    );
    const scalars = this.block(8);
    scalars.view.setFloat32(0, op.spec.alpha, true);
    scalars.view.setFloat32(4, op.spec.beta, true);
    const prepared: Prepared = {
      desc,
      layouts,
      // The algorithm record is the first 64 bytes of the result, kept where cuBLASLt reads it on every call.
      algo: result.address,
      scalars: { alpha: scalars.address, beta: (scalars.address + 4n) as HostPtr },
      describe: `matmul ${op.matmul}: ${describeProduct(op, call)}, ${algorithm}`,
    };
    this.prepared.set(key, prepared);
    return prepared;
  }

  /**
   * One product of the op: cublasLtMatmul with every argument bound, its operands at item `index` of the op's chunk.
   */
  private product(op: MatmulOp, site: IssueSite, index: number): Thunk {
    const { lt } = this;
    const item = op.deviceFirst + index;
    const [a, b, c] = (['b', 'a', 'c'] as const).map((o) =>
      site.address(op.spec[o].buffer, offsetOf(op.spec[o], item)),
    ) as [DevicePtr, DevicePtr, DevicePtr];
    const { desc, layouts, algo, scalars, describe } = this.prepare(op, site, {
      a: alignment(a),
      b: alignment(b),
      c: alignment(c),
    });
    const handle = this.handle(site);
    const workspace = this.workspace(site);
    const stream: StreamHandle = site.stream;
    const matmul = lt.matmul;
    // cuBLASLt answers with a cublasStatus_t, not a cudaError_t: a failure is thrown here, naming the op and the
    // algorithm, and the runner's catch around the issue loop (or the graph capture's) reports it.
    return () => {
      const status = matmul(
        handle,
        desc,
        scalars.alpha,
        a,
        layouts.a,
        b,
        layouts.b,
        scalars.beta,
        c,
        layouts.c,
        c,
        layouts.c,
        algo,
        workspace,
        WORKSPACE_BYTES,
        stream,
      );
      if (status !== 0) throw cublasLtFailure(lt, status, 'cublasLtMatmul', describe);
      return 0;
    };
  }

  issue(op: MatmulOp, site: IssueSite): IssuedOp {
    const products = Array.from({ length: productCount(op) }, (_, i) => this.product(op, site, i));
    const [only] = products;
    if (products.length === 1 && only) return { issue: only, hostTag: null };
    return {
      // Each product throws its own failure, which stops the rest, as one op's would.
      issue: () => {
        for (const product of products) product();
        return 0;
      },
      hostTag: null,
    };
  }
}

/**
 * A matmul runtime over `lt` (libcublasLt, or a test's fake). fp8 is refused here, before anything is made, on a
 * device older than compute capability 8.9, which has no fp8 tensor cores.
 */
export function openMatmul(lt: CublasLtBinding, context: OpenContext<MatmulOp>): KindRuntime<MatmulOp> {
  const fp8 = context.ops.find((op) => op.spec.dtype === 'fp8');
  if (fp8) {
    for (const device of context.devices) {
      const { major, minor } = context.capability(device);
      if (major * 10 + minor < 89) {
        throw new UsageError(
          `matmul ${fp8.matmul} has dtype fp8, which needs compute capability 8.9 or newer (Ada, Hopper), and device ${device} is ${major}.${minor}.`,
          {
            hint: 'Use dtype bf16 or fp16 on this GPU.',
          },
        );
      }
    }
  }
  return new MatmulRuntime(lt, context);
}

/** libcublasLt only where a matmul runs: a missing one is named when the run opens, before anything is allocated. */
export const runtime: KindRuntimeModule<MatmulOp> = {
  open: (context) => openMatmul(openCublasLt(), context),
};
