import type { ModeRole } from './vocabulary.js';

// What a mode is for, read from its role: the one place that decides which modes gate a comparison, which a run
// draws, and which is the split across devices all at once. report/, measure/, compare/ and api/ all ask here.

/** The split across several devices with every device at once (not one share alone). */
export const isSplitTogether = (role: ModeRole): boolean => role.kind === 'split' && role.alone === undefined;

/** The modes a user acts on; over several devices, all of them at once and the pipeline across two (not each alone). */
export function isGating(role: ModeRole): boolean {
  return (
    role.kind === 'serial' ||
    role.kind === 'overlapped' ||
    role.kind === 'stage' ||
    role.kind === 'link' ||
    isSplitTogether(role) ||
    role.kind === 'cross-device'
  );
}

/**
 * The modes a run draws: every overlapped layout, the latency modes, the split across devices (all at once) and the
 * pipeline across two; the model's parts and each share alone are measured, not drawn.
 */
export const isPictured = (role: ModeRole): boolean =>
  role.kind === 'overlapped' || role.kind === 'latency' || isSplitTogether(role) || role.kind === 'cross-device';

/**
 * Issue-cost modes time the host issuing events; their GPU time is a few microseconds of nothing, so they are neither
 * compared nor missed (baselines recorded before runs measured them pair as before).
 */
export const isCompared = (role: ModeRole): boolean => role.kind !== 'issue-cost';
