import koffi from 'koffi';
import { exports, firstLoadable, LibraryOverrideError, loadCudaLibrary, type NativeLibrary } from './load.js';
import type { CudaLibrarySpec } from './locate.js';
import type { HostPtr } from './types.js';

// The door through which a stage kind (src/kinds/<kind>/) binds a library of its own, such as cuBLASLt or NCCL, without
// importing koffi: it names the library and its C prototypes, and gets back plain functions and blocks of native
// memory addressed by branded pointers. Everything native stays in src/cuda.

/** A bound C function. Pointers go in and come out as BigInt; out-parameters are one-element typed arrays. */
export type NativeCall = (...args: readonly unknown[]) => unknown;

export interface BoundLibrary {
  /** The file it was loaded from (a bare soname when the loader found it). */
  readonly path: string;
  /** Binds one function from its C prototype, as koffi reads it: `int f(void *h, _Out_ void **out)`. */
  bind(prototype: string): NativeCall;
  /** Whether it exports `symbol` (a function a later release added, bound only where it is there). */
  exports(symbol: string): boolean;
}

export { LibraryOverrideError };
export type { CudaLibrarySpec } from './locate.js';
export { type RequiredSymbol, row } from './symbols.js';

const bound = (lib: NativeLibrary, path: string): BoundLibrary => ({
  path,
  bind: (prototype) => lib.func(prototype) as NativeCall,
  exports: (symbol) => exports(lib, symbol),
});

/** A place a library is looked for, and why there (what a failed search shows). */
export interface LibraryPlace {
  /** A file path, or a bare soname left to the dynamic loader's own search. */
  readonly path: string;
  readonly origin: string;
}

/**
 * The first of `places` that loads and in which `fault` (given whether it exports a name) finds nothing wrong, and
 * why each before it was passed over: for a library searched in an order of its own (NCCL's), whose kind words the
 * failure itself.
 */
export function openFirst<P extends LibraryPlace>(
  places: readonly P[],
  fault: (exported: (symbol: string) => boolean) => string | null,
  env: NodeJS.ProcessEnv = process.env,
): {
  readonly library: BoundLibrary | null;
  readonly attempts: readonly { readonly candidate: P; readonly reason: string }[];
} {
  const { loaded, attempts } = firstLoadable(places, (lib) => fault((symbol) => exports(lib, symbol)), env);
  return { library: loaded ? bound(loaded.lib, loaded.path) : null, attempts };
}

/** A field of a C struct: a type koffi reads ("int", "const char *"), or a fixed array of one, as a typed array. */
export type StructField = string | { readonly array: string; readonly length: number };

const structSizes = new Map<string, number>();

/**
 * Declares the C struct `name` for the prototypes that take one (by value, or by pointer as a plain object), and
 * returns its size in bytes. A name is declared once per process; declaring it again returns the first's size.
 */
export function declareStruct(name: string, fields: Readonly<Record<string, StructField>>): number {
  let size = structSizes.get(name);
  if (size === undefined) {
    const members = Object.fromEntries(
      Object.entries(fields).map(([field, type]) => [
        field,
        typeof type === 'string' ? type : koffi.array(type.array, type.length, 'Typed'),
      ]),
    );
    size = koffi.sizeof(koffi.struct(name, members));
    structSizes.set(name, size);
  }
  return size;
}

/**
 * A CUDA library that a kind binds itself (cuBLAS for gemm, cuBLASLt for matmul), found by cuda-pipe's own search
 * (locate.ts: its override variable alone when set, else CUDA_PATH and CUDA_HOME, the loader, /usr/local/cuda) and
 * checked as libcudart is: its marker function, and every row of `spec.requires` against the CUDA release that added
 * it (symbols.ts), so an older library is refused when it loads, naming what it lacks (exit 3).
 */
export function openCudaLibrary(spec: CudaLibrarySpec, env: NodeJS.ProcessEnv = process.env): BoundLibrary {
  const { lib, path } = loadCudaLibrary(spec, env);
  return bound(lib, path);
}

/** A library's functions, bound by name from their C prototypes. */
export type BoundCalls<P extends Readonly<Record<string, string>>> = { readonly [K in keyof P]: NativeCall };

export function bindCalls<P extends Readonly<Record<string, string>>>(lib: BoundLibrary, prototypes: P): BoundCalls<P> {
  return Object.fromEntries(
    Object.entries(prototypes).map(([name, prototype]) => [name, lib.bind(prototype)]),
  ) as BoundCalls<P>;
}

/**
 * A library as a kind calls it: the file it was loaded from, its functions bound by name, and its statuses as the
 * kind's typed error. Every library a kind binds (cuBLAS, cuBLASLt, NCCL) is wrapped so: each gives its prototypes
 * and how a status other than success reads.
 */
export interface CheckedLibrary<F, E extends Error> {
  readonly path: string;
  readonly fn: F;
  /** The error of `api` having returned `status`, in the library's words. */
  failure(status: number, api: string, context?: string): E;
  /** Throws `failure` unless `status` is 0, every such library's success. */
  check(status: number, api: string, context?: string): void;
}

export function checkedLibrary<P extends Readonly<Record<string, string>>, E extends Error>(
  lib: BoundLibrary,
  prototypes: P,
  failure: (fn: BoundCalls<P>, status: number, api: string, context?: string) => E,
): CheckedLibrary<BoundCalls<P>, E> {
  const fn = bindCalls(lib, prototypes);
  const fail = (status: number, api: string, context?: string) => failure(fn, status, api, context);
  return {
    path: lib.path,
    fn,
    failure: fail,
    check: (status, api, context) => {
      if (status !== 0) throw fail(status, api, context);
    },
  };
}

/** `load` run once per process, the first time a run needs the library; the same library every time after. */
export function loadOnce<T>(load: (env: NodeJS.ProcessEnv) => T): (env?: NodeJS.ProcessEnv) => T {
  let loaded: T | undefined;
  return (env = process.env) => {
    loaded ??= load(env);
    return loaded;
  };
}

/**
 * Host memory outside the JS heap, for what a library reads by pointer while a call is enqueued or a graph replays
 * (scalars, an algorithm record) and for the structs it fills in. Read and written through `view`; `free` once.
 */
export interface NativeBlock {
  readonly address: HostPtr;
  readonly view: DataView;
  free(): void;
}

export function nativeBlock(bytes: number): NativeBlock {
  const block = koffi.alloc('uint8_t', Math.max(1, bytes));
  const address = koffi.address(block) as HostPtr;
  const view = new DataView(koffi.view(block, Math.max(1, bytes)));
  let freed = false;
  return {
    address,
    view,
    free: () => {
      if (freed) return;
      freed = true;
      koffi.free(block);
    },
  };
}
