/**
 * Which chunk holds each pinned slot: chunk c uses slot c mod `slots`, and takes it only once chunk c − slots (the
 * slot's previous chunk) released it, which it does when its CPU work finished. Pure bookkeeping: the executor asks
 * `blocker` before it lets a chunk's copy overwrite a slot, waits for that chunk's task, then `take`s the slot.
 */
export class SlotTracker {
  /** The chunk holding each slot, or null. */
  private readonly holders: Array<number | null>;
  /** The last chunk that took each slot, or null: chunks take a slot in order, none skipped. */
  private readonly last: Array<number | null>;

  constructor(readonly slots: number) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`a slot tracker needs at least one slot, not ${slots}`);
    this.holders = new Array<number | null>(slots).fill(null);
    this.last = new Array<number | null>(slots).fill(null);
  }

  slotOf(chunk: number): number {
    if (!Number.isInteger(chunk) || chunk < 0) throw new Error(`chunk ${chunk} is not a chunk index`);
    return chunk % this.slots;
  }

  /** The chunk whose CPU work must finish before `chunk` may take its slot, or null when the slot is free. */
  blocker(chunk: number): number | null {
    return this.holders[this.slotOf(chunk)] ?? null;
  }

  /**
   * `chunk` takes its slot; returns the slot. Throws when the slot is still held or an earlier chunk of it never took
   * it.
   */
  take(chunk: number): number {
    const slot = this.slotOf(chunk);
    const holder = this.holders[slot] ?? null;
    if (holder !== null)
      throw new Error(`chunk ${chunk} cannot take slot ${slot}: chunk ${holder}'s CPU work has not finished`);
    const previous = this.last[slot] ?? null;
    const expected = previous === null ? slot : previous + this.slots;
    if (chunk !== expected) throw new Error(`chunk ${chunk} cannot take slot ${slot} before chunk ${expected} did`);
    this.holders[slot] = chunk;
    this.last[slot] = chunk;
    return slot;
  }

  /** `chunk`'s CPU work finished: its slot may be reused. Throws when it does not hold its slot. */
  release(chunk: number): void {
    const slot = this.slotOf(chunk);
    if (this.holders[slot] !== chunk)
      throw new Error(
        `chunk ${chunk} does not hold slot ${slot} (${this.holders[slot] === null ? 'free' : `chunk ${this.holders[slot]} holds it`})`,
      );
    this.holders[slot] = null;
  }

  /** The chunk holding each slot, by slot; null for a free one. */
  held(): ReadonlyArray<number | null> {
    return [...this.holders];
  }
}
