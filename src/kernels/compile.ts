import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { resolveLibraryFile } from '../cuda/locate.js';
import { openNvrtc } from '../cuda/nvrtc.js';
import { UsageError } from '../errors.js';

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
  /** true when the CUBIN came from the on-disk cache and NVRTC was not loaded or called. */
  readonly cached: boolean;
  /** Host time spent on this module: the cache look-up, plus NVRTC when it ran. */
  readonly ms: number;
  readonly nvrtcVersion: string;
  readonly log: string;
}

const CACHE_FORMAT = 'cuda-pipe-cubin-v1';

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
  readonly sourcePath: string;
  readonly arch: string;
  readonly nvrtcVersion: string;
  readonly options: readonly string[];
}

/**
 * Compiles with NVRTC for `arch`, or returns the cached CUBIN. A compile error becomes a usage error showing
 * NVRTC's log, whose diagnostics name the source file and line.
 */
export function compileKernelSource(request: CompileRequest, env: NodeJS.ProcessEnv = process.env): CompiledModule {
  const started = performance.now();
  const dir = cacheDir(env);
  const key = cacheKey(request, nvrtcIdentity(env));
  const cubinPath = join(dir, `${key}.cubin`);
  const metaPath = join(dir, `${key}.json`);
  const cached = readCached(cubinPath, metaPath);
  if (cached) {
    return { sourcePath: request.sourcePath, arch: request.arch, cubin: cached.cubin, cached: true,
      ms: performance.now() - started, nvrtcVersion: cached.meta.nvrtcVersion, log: '' };
  }
  const nvrtc = openNvrtc(env);
  const version = nvrtc.version();
  const nvrtcVersion = `${version.major}.${version.minor}`;
  const outcome = nvrtc.compile(request.source, request.sourcePath, [`--gpu-architecture=${request.arch}`, ...request.options]);
  if (!outcome.ok) {
    throw new UsageError(`NVRTC ${nvrtcVersion} could not compile ${request.sourcePath} for ${request.arch}:\n${outcome.log}`, {
      hint: 'Fix the kernel source (the log above names file and line), or check the NVRTC options in the config.',
    });
  }
  const meta: CacheEntryMeta = { sourcePath: request.sourcePath, arch: request.arch, nvrtcVersion, options: request.options };
  writeCached(dir, cubinPath, metaPath, outcome.cubin, meta);
  return { sourcePath: request.sourcePath, arch: request.arch, cubin: outcome.cubin, cached: false,
    ms: performance.now() - started, nvrtcVersion, log: outcome.log };
}

function readCached(cubinPath: string, metaPath: string): { cubin: Uint8Array; meta: CacheEntryMeta } | null {
  try {
    const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as CacheEntryMeta;
    return { cubin: new Uint8Array(readFileSync(cubinPath)), meta };
  } catch {
    return null;
  }
}

function writeCached(dir: string, cubinPath: string, metaPath: string, cubin: Uint8Array, meta: CacheEntryMeta): void {
  try {
    mkdirSync(dir, { recursive: true });
    // Write-then-rename so that a concurrent run never reads half a file; the CUBIN lands before its metadata,
    // which is what marks the entry complete.
    const suffix = `.${process.pid}.tmp`;
    writeFileSync(cubinPath + suffix, cubin);
    renameSync(cubinPath + suffix, cubinPath);
    writeFileSync(metaPath + suffix, JSON.stringify(meta));
    renameSync(metaPath + suffix, metaPath);
  } catch {
    // A read-only or full cache folder only costs the next run a recompile.
  }
}
