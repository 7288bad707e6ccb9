// Chunk arithmetic, shared by the config checks (how many chunks can there be?) and the planner (which ranges?).

export interface ChunkRange {
  readonly index: number;
  /** First element and element count; every buffer of the plan shares these ranges. */
  readonly first: number;
  readonly count: number;
}

/**
 * The most chunks one plan holds over all its layouts (a run's one layout, a sweep setting's streams × chunks). A
 * plan's size grows with its chunks, and building it is synchronous, holding a signal off: the shipped configs with the
 * most ops a chunk planned 16,384 chunks in 1.4 and 2.7 s on a shared 2-core box at a load of 11, 65,536 in 7.5 s
 * at a load of 8, and a dry run of 1,000,000 chunks of balanced.yaml held 949 MiB for 18 s (with --ops, 4.5 GiB for
 * 63 s: docs/measurements/2026-11-28-hostile/). Past a few thousand chunks, issuing a chunk's ops costs more than
 * overlapping them can save.
 */
export const MAX_PLAN_CHUNKS = 16_384;

/** The most chunks a sweep plans over all its settings: every setting's plan is built before the first is measured. */
export const MAX_SWEEP_CHUNKS = 4 * MAX_PLAN_CHUNKS;

/** How many `align`-element units the elements make: the most chunks they can be cut into. */
export function chunkUnits(elements: number, align: number): number {
  return Math.ceil(elements / align);
}

/**
 * Cuts [0, elements) into at most `chunks` ranges that start at multiples of `align`. Every chunk but the last
 * has the same size; the last takes what is left and may be shorter. When equal sizes cannot make `chunks`
 * non-empty pieces (9 elements in 4 chunks of 3), fewer chunks come back; the caller says so.
 */
export function splitRanges(elements: number, chunks: number, align = 1): ChunkRange[] {
  if (!Number.isInteger(elements) || elements < 1)
    throw new RangeError(`elements must be a positive integer, got ${elements}`);
  if (!Number.isInteger(chunks) || chunks < 1) throw new RangeError(`chunks must be a positive integer, got ${chunks}`);
  if (!Number.isInteger(align) || align < 1) throw new RangeError(`align must be a positive integer, got ${align}`);
  const units = chunkUnits(elements, align);
  const size = Math.ceil(units / Math.min(chunks, units)) * align;
  const ranges: ChunkRange[] = [];
  for (let first = 0; first < elements; first += size) {
    ranges.push({ index: ranges.length, first, count: Math.min(size, elements - first) });
  }
  return ranges;
}

/** A whole-buffer range: the one "chunk" of serial and stage modes. */
export const wholeRange = (elements: number): ChunkRange => ({ index: 0, first: 0, count: elements });

/**
 * How many chunk-sized device slots a device-memory budget holds, for chunks of `chunkElements` elements of buffers
 * whose element sizes add up to `bytesPerElement`. `slots` asks for a number outright. Null when every chunk gets
 * its own place (no budget and no slots asked, or room for all of them); a string says why it cannot fit.
 */
export function ringSlots(options: {
  chunks: number;
  chunkElements: number;
  bytesPerElement: number;
  budgetBytes: number | null;
  slots: number | null;
}): number | null | { error: string } {
  const { chunks, chunkElements, bytesPerElement, budgetBytes, slots } = options;
  const slotBytes = chunkElements * bytesPerElement;
  if (budgetBytes === null && slots === null) return null;
  const fit = budgetBytes === null ? Number.POSITIVE_INFINITY : Math.floor(budgetBytes / slotBytes);
  if (slots !== null && slots > fit)
    return {
      error: `${slots} slots of ${slotBytes} bytes (one chunk of every buffer) need ${slots * slotBytes} bytes, over the budget of ${budgetBytes} bytes`,
    };
  const chosen = slots ?? fit;
  if (chosen < 1)
    return {
      error: `one chunk of every buffer takes ${slotBytes} bytes, more than the budget of ${budgetBytes} bytes`,
    };
  return chosen >= chunks ? null : chosen;
}
