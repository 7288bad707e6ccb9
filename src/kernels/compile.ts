import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { resolveLibraryFile } from '../cuda/locate.js';
import { openNvrtc } from '../cuda/nvrtc.js';
import { UsageError } from '../errors.js';
import { MAX_CACHE_META_BYTES, MAX_CUBIN_BYTES } from '../files/limits.js';
import { readRegularBytes, readRegularFile } from '../files/read.js';
import { ptxEntries } from './ptx.js';
import { checkCompiledKernel, type ResolvedKernel } from './resolve.js';

export interface CompileRequest {
  readonly sourcePath: string;
  readonly source: string;
  readonly options: readonly string[];
  /** e.g. "sm_90" */
  readonly arch: string;
}

export interface CompiledModule {
  readonly sourcePath: string;
  readonly arch: string;
  readonly cubin: Uint8Array;
  /** Each kernel NVRTC emitted and its parameters as the PTX has them ("u64", "f32"): see ptx.ts. */
  readonly entries: Readonly<Record<string, readonly string[]>>;
  /** true when the CUBIN came from the on-disk cache and NVRTC was not loaded or called. */
  readonly cached: boolean;
  /** Why the cache entry found for this request was not used and was rebuilt, or null. */
  readonly cacheProblem: string | null;
  /** Host time spent on this module: the cache look-up, plus NVRTC when it ran. */
  readonly ms: number;
  readonly nvrtcVersion: string;
  readonly log: string;
}

// v2: entries carry the CUBIN's hash and the PTX's kernel parameters; v1 entries are never read.
const CACHE_FORMAT = 'cuda-pipe-cubin-v2';

export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CUDA_PIPE_CACHE_DIR) return env.CUDA_PIPE_CACHE_DIR;
  const base = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'cuda-pipe', 'cubin');
}

/** Identifies the NVRTC build by its resolved file, so that a cache hit needs no dlopen of a 60+ MB library. */
export function nvrtcIdentity(env: NodeJS.ProcessEnv = process.env): string {
  const file = resolveLibraryFile('nvrtc', env, existsSync, ldSoConfDirs());
  if (!file) return 'unresolved';
  try {
    const real = realpathSync(file);
    const stat = statSync(real);
    return `${real}:${stat.size}:${Math.trunc(stat.mtimeMs)}`;
  } catch {
    return `${file}:unreadable`;
  }
}

function ldSoConfDirs(): string[] {
  try {
    return readdirSync('/etc/ld.so.conf.d')
      .filter((name) => name.endsWith('.conf'))
      .flatMap((name) => readFileSync(join('/etc/ld.so.conf.d', name), 'utf8').split('\n'))
      .map((line) => line.replace(/#.*/, '').trim())
      .filter((line) => line.startsWith('/'));
  } catch {
    return [];
  }
}

export function cacheKey(request: CompileRequest, identity: string): string {
  return createHash('sha256')
    .update(JSON.stringify([CACHE_FORMAT, request.source, request.options, request.arch, identity]))
    .digest('hex');
}

interface CacheEntryMeta {
  readonly format: string;
  readonly sourcePath: string;
  readonly arch: string;
  readonly nvrtcVersion: string;
  readonly options: readonly string[];
  readonly bytes: number;
  /** sha256 of the CUBIN: an entry whose file does not match it was truncated, replaced or corrupted. */
  readonly sha256: string;
  readonly entries: Record<string, string[]>;
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** "a line to stderr": how the cache says it rebuilt a bad entry. */
export type CacheReporter = (line: string) => void;
const toStderr: CacheReporter = (line) => process.stderr.write(`${line}\n`);

/**
 * Compiles with NVRTC for `arch`, or returns the cached CUBIN once its entry checks out. A compile error becomes a
 * usage error showing NVRTC's log, whose diagnostics name the source file and line; an entry that is not what
 * this cache wrote (not a regular file, too large, not matching its hash) is rebuilt, and `report` says so.
 */
export async function compileKernelSource(
  request: CompileRequest,
  env: NodeJS.ProcessEnv = process.env,
  report: CacheReporter = toStderr,
): Promise<CompiledModule> {
  const started = performance.now();
  const dir = cacheDir(env);
  const key = cacheKey(request, nvrtcIdentity(env));
  const cubinPath = join(dir, `${key}.cubin`);
  const metaPath = join(dir, `${key}.json`);
  const lookup = readCached(cubinPath, metaPath);
  if (lookup.kind === 'hit') {
    return {
      sourcePath: request.sourcePath,
      arch: request.arch,
      cubin: lookup.cubin,
      entries: lookup.meta.entries,
      cached: true,
      cacheProblem: null,
      ms: performance.now() - started,
      nvrtcVersion: lookup.meta.nvrtcVersion,
      log: '',
    };
  }
  const cacheProblem = lookup.kind === 'bad' ? lookup.reason : null;
  if (cacheProblem)
    report(
      `cuda-pipe: the kernel cache entry for ${request.sourcePath} (${request.arch}) ${cacheProblem}; compiling it again.`,
    );
  const nvrtc = openNvrtc(env);
  const version = nvrtc.version();
  const nvrtcVersion = `${version.major}.${version.minor}`;
  const outcome = await nvrtc.compile(request.source, request.sourcePath, [
    `--gpu-architecture=${request.arch}`,
    ...request.options,
  ]);
  if (!outcome.ok && outcome.failed === 'options') {
    throw new UsageError(
      `NVRTC ${nvrtcVersion} refused the options for ${request.sourcePath} (${request.options.join(' ') || 'none'}): ${outcome.log}`,
      {
        hint: "Fix the kernel's options: in the config (NVRTC accepts the options of `nvcc --help` that apply to device code, such as --use_fast_math or -DNAME=VALUE).",
      },
    );
  }
  if (!outcome.ok) {
    throw new UsageError(
      `NVRTC ${nvrtcVersion} could not compile ${request.sourcePath} for ${request.arch}:\n${outcome.log}`,
      {
        hint: 'Fix the kernel source (the log above names file and line), or check the NVRTC options in the config.',
      },
    );
  }
  const entries = ptxEntries(outcome.ptx);
  const meta: CacheEntryMeta = {
    format: CACHE_FORMAT,
    sourcePath: request.sourcePath,
    arch: request.arch,
    nvrtcVersion,
    options: request.options,
    bytes: outcome.cubin.byteLength,
    sha256: sha256(outcome.cubin),
    entries,
  };
  writeCached(dir, cubinPath, metaPath, outcome.cubin, meta);
  return {
    sourcePath: request.sourcePath,
    arch: request.arch,
    cubin: outcome.cubin,
    entries,
    cached: false,
    cacheProblem,
    ms: performance.now() - started,
    nvrtcVersion,
    log: outcome.log,
  };
}

/** A config's kernel compiled (or fetched) for `arch`, and checked against the parameters NVRTC gave it. */
export async function compileKernel(
  kernel: ResolvedKernel,
  arch: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<CompiledModule> {
  const compiled = await compileKernelSource(
    { sourcePath: kernel.sourcePath, source: kernel.sourceText, options: kernel.options, arch },
    env,
  );
  checkCompiledKernel(kernel, compiled.entries);
  return compiled;
}

type CacheLookup =
  | { readonly kind: 'hit'; readonly cubin: Uint8Array; readonly meta: CacheEntryMeta }
  | { readonly kind: 'miss' }
  | { readonly kind: 'bad'; readonly reason: string };

const ELF_MAGIC = [0x7f, 0x45, 0x4c, 0x46];

/**
 * An entry is trusted only when both files are regular files within their limits, the metadata is this format's,
 * and the CUBIN has the size and hash the metadata recorded: a FIFO or /dev/zero put in its place is never read, and
 * an empty or truncated CUBIN is never handed to the driver.
 */
function readCached(cubinPath: string, metaPath: string): CacheLookup {
  // The metadata lands last and marks the entry complete: without it there is no entry (or one still being written).
  if (!lstatExists(metaPath)) return { kind: 'miss' };
  let meta: CacheEntryMeta;
  try {
    const text = readRegularFile(metaPath, { what: 'kernel cache metadata', maxBytes: MAX_CACHE_META_BYTES });
    const parsed = JSON.parse(text) as unknown;
    if (!isMeta(parsed))
      return { kind: 'bad', reason: `has metadata ${metaPath} that this version of cuda-pipe did not write` };
    meta = parsed;
  } catch (error) {
    return { kind: 'bad', reason: `has unreadable metadata (${reasonOf(error)})` };
  }
  let cubin: Uint8Array;
  try {
    cubin = new Uint8Array(readRegularBytes(cubinPath, { what: 'cached CUBIN', maxBytes: MAX_CUBIN_BYTES }));
  } catch (error) {
    return { kind: 'bad', reason: `has an unreadable CUBIN (${reasonOf(error)})` };
  }
  if (cubin.byteLength !== meta.bytes)
    return { kind: 'bad', reason: `has a CUBIN of ${cubin.byteLength} bytes where ${meta.bytes} were written` };
  if (sha256(cubin) !== meta.sha256)
    return { kind: 'bad', reason: `has a CUBIN ${cubinPath} whose content does not match its recorded hash` };
  if (!ELF_MAGIC.every((byte, i) => cubin[i] === byte))
    return { kind: 'bad', reason: `has a CUBIN ${cubinPath} that is not an ELF image` };
  return { kind: 'hit', cubin, meta };
}

function lstatExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The reason part of a file error ("Cannot read X: is a named pipe (FIFO), not a regular file." → after the colon). */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^Cannot read [^:]*: /, '').replace(/\.$/, '');
}

function isMeta(value: unknown): value is CacheEntryMeta {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  return (
    m.format === CACHE_FORMAT &&
    typeof m.nvrtcVersion === 'string' &&
    Number.isSafeInteger(m.bytes) &&
    (m.bytes as number) > 0 &&
    typeof m.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(m.sha256) &&
    typeof m.entries === 'object' &&
    m.entries !== null &&
    Object.values(m.entries).every((params) => Array.isArray(params) && params.every((p) => typeof p === 'string'))
  );
}

function writeCached(dir: string, cubinPath: string, metaPath: string, cubin: Uint8Array, meta: CacheEntryMeta): void {
  const suffix = `.${process.pid}.tmp`;
  try {
    mkdirSync(dir, { recursive: true });
    // Write-then-rename so that a concurrent run never reads half a file; the CUBIN lands before its metadata,
    // which is what marks the entry complete. 'wx' creates a new file, so a FIFO or link left at the temporary
    // name fails the write instead of blocking it or writing through it.
    writeFileSync(cubinPath + suffix, cubin, { flag: 'wx' });
    renameSync(cubinPath + suffix, cubinPath);
    writeFileSync(metaPath + suffix, JSON.stringify(meta), { flag: 'wx' });
    renameSync(metaPath + suffix, metaPath);
  } catch {
    // A read-only or full cache folder only costs the next run a recompile.
  }
}
