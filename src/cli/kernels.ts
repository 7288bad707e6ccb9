import { checkKernelSources } from '../api/kernels.js';
import { cliIo } from './io.js';
import { UsageError } from '../errors.js';
import { formatBytes, formatMs } from '../format.js';
import { listKernelSources, readKernelSource } from '../kernels/catalog.js';
import { formatSignature } from '../kernels/signature.js';
import { fitLines, paragraphColumns } from '../report/width.js';

export interface KernelsFlags {
  check?: boolean;
  arch?: string;
}

/**
 * Lists (and with --check compiles) the given sources, or the built-in kernels/ when none is given. With --check the
 * verdict leads (how many compiled, with which NVRTC for which architecture), then each source's compile, then the
 * listing. Every line fits the output's width.
 */
export async function kernelsCommand(paths: readonly string[], flags: KernelsFlags): Promise<0> {
  if (flags.arch !== undefined && !flags.check)
    throw new UsageError('--arch only applies with --check: listing kernels compiles nothing.');
  const sources = paths.length ? paths.map((path) => readKernelSource(path)) : listKernelSources();
  const listing: string[] = [];
  for (const source of sources) {
    listing.push(source.path);
    for (const signature of source.signatures) {
      listing.push(
        `  ${formatSignature(signature)}${signature.ambiguity ? ` (cannot be used: ${signature.ambiguity})` : ''}`,
      );
    }
    for (const hidden of source.excluded)
      listing.push(`  ${hidden.name}: only under ${hidden.conditions.join(', ')}, off without -D options`);
    if (!source.signatures.length && !source.excluded.length) listing.push('  (no extern "C" __global__ kernels)');
  }
  const out = cliIo().stdout;
  const write = (lines: readonly string[]) => out.write(`${fitLines(lines.join('\n'), paragraphColumns(out))}\n`);
  if (!flags.check) {
    write(listing);
    return 0;
  }
  const check = await checkKernelSources(sources, flags.arch);
  const failures = check.sources.filter((s) => !s.ok);
  const compiled = `${sources.length - failures.length} of ${sources.length} sources compiled`;
  const compile = (s: (typeof check.sources)[number]) =>
    s.ok
      ? `  ok      ${s.path}: CUBIN ${formatBytes(s.cubinBytes)} in ${formatMs(s.ms)}`
      : `  FAILED  ${s.path}:\n${s.log.replace(/^/gm, '    ')}`;
  write([
    `${compiled} for ${check.arch} (${check.why}) with NVRTC ${check.nvrtc.version}, bypassing the cache`,
    ...check.sources.map(compile),
    `NVRTC: ${check.nvrtc.path}`,
    '',
    ...listing,
  ]);
  if (failures.length) {
    const first =
      failures[0]?.log.split('\n').find((line) => /error/.test(line)) ?? failures[0]?.log.split('\n')[0] ?? '';
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
