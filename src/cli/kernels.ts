import { checkKernelSources } from '../api/kernels.js';
import { cliIo } from './io.js';
import { UsageError } from '../errors.js';
import { formatBytes, formatMs } from '../format.js';
import { listKernelSources, readKernelSource } from '../kernels/catalog.js';
import { formatSignature } from '../kernels/signature.js';

export interface KernelsFlags {
  check?: boolean;
  arch?: string;
}

/** Lists (and with --check compiles) the given sources, or the built-in kernels/ when none is given. */
export async function kernelsCommand(paths: readonly string[], flags: KernelsFlags): Promise<0> {
  if (flags.arch !== undefined && !flags.check) throw new UsageError('--arch only applies with --check: listing kernels compiles nothing.');
  const sources = paths.length ? paths.map((path) => readKernelSource(path)) : listKernelSources();
  for (const source of sources) {
    cliIo().stdout.write(`${source.path}\n`);
    for (const signature of source.signatures) {
      cliIo().stdout.write(`  ${formatSignature(signature)}${signature.ambiguity ? ` (cannot be used: ${signature.ambiguity})` : ''}\n`);
    }
    for (const hidden of source.excluded) cliIo().stdout.write(`  ${hidden.name}: only under ${hidden.conditions.join(', ')}, off without -D options\n`);
    if (!source.signatures.length && !source.excluded.length) cliIo().stdout.write('  (no extern "C" __global__ kernels)\n');
  }
  if (!flags.check) return 0;
  const check = await checkKernelSources(sources, flags.arch);
  cliIo().stdout.write(`\nCompiling with NVRTC ${check.nvrtc.version} (${check.nvrtc.path}) for ${check.arch} (${check.why}), bypassing the cache:\n`);
  for (const s of check.sources) {
    cliIo().stdout.write(s.ok ? `  ok      ${s.path}: CUBIN ${formatBytes(s.cubinBytes)} in ${formatMs(s.ms)}\n` : `  FAILED  ${s.path}:\n${s.log.replace(/^/gm, '    ')}\n`);
  }
  const failures = check.sources.filter((s) => !s.ok);
  cliIo().stdout.write(`${sources.length - failures.length} of ${sources.length} sources compiled.\n`);
  if (failures.length) {
    const first = failures[0]?.log.split('\n').find((line) => /error/.test(line)) ?? failures[0]?.log.split('\n')[0] ?? '';
    throw new UsageError(
      `${failures.length} of ${sources.length} kernel sources did not compile with NVRTC ${check.nvrtc.version} for ${check.arch}: ` +
        `${failures.map((s) => s.path).join(', ')}${first ? ` (first error: ${first.trim()})` : ''}.`,
      {
        hint: "NVRTC's log for each is above, with file and line.",
      },
    );
  }
  return 0;
}
