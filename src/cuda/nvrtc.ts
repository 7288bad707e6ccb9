import { DeviceFailure } from '../errors.js';
import { loadCudaLibrary, type NativeLibrary } from './load.js';
import { compileInChild, compilerChildScript, type NvrtcCompileOutcome } from './nvrtc-process.js';

export type { NvrtcCompileOutcome } from './nvrtc-process.js';

const NVRTC_ERROR_INVALID_OPTION = 5;
const NVRTC_ERROR_COMPILATION = 6;

function declare(lib: NativeLibrary) {
  return {
    version: lib.func('int nvrtcVersion(_Out_ int *major, _Out_ int *minor)'),
    getErrorString: lib.func('const char *nvrtcGetErrorString(int result)'),
    getNumSupportedArchs: lib.func('int nvrtcGetNumSupportedArchs(_Out_ int *count)'),
    getSupportedArchs: lib.func('int nvrtcGetSupportedArchs(_Out_ int *archs)'),
    createProgram: lib.func(
      'int nvrtcCreateProgram(_Out_ void **prog, const char *src, const char *name, int numHeaders, void *headers, void *includeNames)',
    ),
    destroyProgram: lib.func('int nvrtcDestroyProgram(_Inout_ void **prog)'),
    compileProgram: lib.func('int nvrtcCompileProgram(void *prog, int numOptions, const char **options)'),
    getProgramLogSize: lib.func('int nvrtcGetProgramLogSize(void *prog, _Out_ size_t *size)'),
    getProgramLog: lib.func('int nvrtcGetProgramLog(void *prog, _Out_ uint8_t *log)'),
    getPTXSize: lib.func('int nvrtcGetPTXSize(void *prog, _Out_ size_t *size)'),
    getPTX: lib.func('int nvrtcGetPTX(void *prog, _Out_ uint8_t *ptx)'),
    getCUBINSize: lib.func('int nvrtcGetCUBINSize(void *prog, _Out_ size_t *size)'),
    getCUBIN: lib.func('int nvrtcGetCUBIN(void *prog, _Out_ uint8_t *cubin)'),
  };
}

/** NVRTC, typed. Only compile errors come back as values; anything else NVRTC reports is thrown. */
export class Nvrtc {
  private readonly fn: ReturnType<typeof declare>;

  constructor(
    readonly libraryPath: string,
    lib: NativeLibrary,
  ) {
    this.fn = declare(lib);
  }

  version(): { major: number; minor: number } {
    const major = [0];
    const minor = [0];
    this.check(this.fn.version(major, minor) as number, 'nvrtcVersion');
    return { major: major[0] ?? 0, minor: minor[0] ?? 0 };
  }

  /** Compute capabilities NVRTC can emit code for, as numbers like 90 for sm_90. */
  supportedArchs(): number[] {
    const count = [0];
    this.check(this.fn.getNumSupportedArchs(count) as number, 'nvrtcGetNumSupportedArchs');
    const archs = new Int32Array(count[0] ?? 0);
    this.check(this.fn.getSupportedArchs(archs) as number, 'nvrtcGetSupportedArchs');
    return Array.from(archs);
  }

  /**
   * Compiles CUDA C++ to a CUBIN, and the PTX it went through (its `.entry` lines are the compiler's own word on
   * each kernel's parameters); `name` appears in the log's diagnostics, so pass the source's path. The compile runs
   * in a child process (nvrtc-process.ts): NVRTC 11's front end puts its own SIGINT and SIGTERM handlers in place
   * of Node's while it parses, and one of those signals then called exit(4) under the compile, which crashed the
   * process (SIGSEGV) instead of ending it with 130. Where the compiled child script is absent (a test run from the
   * TypeScript sources before a build) it compiles here, on one of libuv's threads.
   */
  async compile(source: string, name: string, options: readonly string[]): Promise<NvrtcCompileOutcome> {
    const script = compilerChildScript();
    if (script === null) return this.compileHere(source, name, options);
    return compileInChild(script, { library: this.libraryPath, source, name, options: [...options] });
  }

  /**
   * The compile itself, in this process: on one of libuv's threads, so that the JS thread answers a signal while
   * NVRTC works (a large kernel takes seconds).
   */
  async compileHere(source: string, name: string, options: readonly string[]): Promise<NvrtcCompileOutcome> {
    const program = new BigUint64Array(1);
    this.check(this.fn.createProgram(program, source, name, 0, null, null) as number, 'nvrtcCreateProgram');
    try {
      const result = await new Promise<number>((resolve, reject) =>
        this.fn.compileProgram.async(program[0], options.length, [...options], (error: unknown, code: number) =>
          error ? reject(error) : resolve(code),
        ),
      );
      const log = this.log(program[0] ?? 0n);
      if (result === NVRTC_ERROR_COMPILATION) return { ok: false, failed: 'source', log };
      if (result === NVRTC_ERROR_INVALID_OPTION) return { ok: false, failed: 'options', log };
      this.check(result, 'nvrtcCompileProgram');
      const ptxSize = [0];
      this.check(this.fn.getPTXSize(program[0], ptxSize) as number, 'nvrtcGetPTXSize');
      const ptxBytes = new Uint8Array(Math.max(1, Number(ptxSize[0])));
      this.check(this.fn.getPTX(program[0], ptxBytes) as number, 'nvrtcGetPTX');
      const nul = ptxBytes.indexOf(0);
      const ptx = Buffer.from(ptxBytes.subarray(0, nul < 0 ? ptxBytes.length : nul)).toString('utf8');
      const size = [0];
      this.check(this.fn.getCUBINSize(program[0], size) as number, 'nvrtcGetCUBINSize');
      const cubin = new Uint8Array(Number(size[0]));
      this.check(this.fn.getCUBIN(program[0], cubin) as number, 'nvrtcGetCUBIN');
      return { ok: true, cubin, ptx, log };
    } finally {
      this.fn.destroyProgram(program);
    }
  }

  private log(program: bigint): string {
    const size = [0];
    this.check(this.fn.getProgramLogSize(program, size) as number, 'nvrtcGetProgramLogSize');
    const bytes = new Uint8Array(Math.max(1, Number(size[0])));
    this.check(this.fn.getProgramLog(program, bytes) as number, 'nvrtcGetProgramLog');
    const nul = bytes.indexOf(0);
    return Buffer.from(bytes.subarray(0, nul < 0 ? bytes.length : nul))
      .toString('utf8')
      .trimEnd();
  }

  private check(code: number, api: string): void {
    if (code !== 0) {
      throw new DeviceFailure(`${api} failed: ${this.fn.getErrorString(code) as string} (${code})`);
    }
  }
}

let cached: Nvrtc | undefined;

export function openNvrtc(env: NodeJS.ProcessEnv = process.env): Nvrtc {
  if (!cached) {
    const { lib, path } = loadCudaLibrary('nvrtc', env);
    cached = new Nvrtc(path, lib);
  }
  return cached;
}
