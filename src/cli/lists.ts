import { InvalidArgumentError } from 'commander';
import { HOST_MEMORY_KINDS, type HostMemoryKind } from '../vocabulary.js';

/** `--host-memory pinned,pageable`: each kind once, in the order given; a bad one names the kinds there are. */
export function hostMemoryKinds(text: string): HostMemoryKind[] {
  const kinds = text
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');
  const bad = kinds.find((k) => !(HOST_MEMORY_KINDS as readonly string[]).includes(k));
  if (bad !== undefined || !kinds.length) {
    throw new InvalidArgumentError(
      `expected host memory kinds from ${HOST_MEMORY_KINDS.join(', ')}, comma-separated; got "${bad ?? text}".`,
    );
  }
  return [...new Set(kinds as HostMemoryKind[])];
}
