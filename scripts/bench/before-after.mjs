#!/usr/bin/env node
// Prints each mode's median (ms) in the Results scripts/gpu/before-after.sh wrote, before and after, round by round,
// and the ratio after / before of the medians over the rounds. Usage: node scripts/bench/before-after.mjs OUT
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
if (!dir) throw new Error('usage: before-after.mjs OUT');
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
/** config → mode → { before: ms[], after: ms[] } */
const table = new Map();
for (const name of readdirSync(dir).sort()) {
  const match = /^(before|after)-(.+)-(\d+)\.json$/.exec(name);
  if (!match) continue;
  const [, side, config] = match;
  const result = JSON.parse(readFileSync(join(dir, name), 'utf8'));
  for (const mode of result.modes ?? []) {
    const ms = mode.stats?.median;
    if (typeof ms !== 'number') continue;
    const modes = table.get(config) ?? new Map();
    table.set(config, modes);
    const entry = modes.get(mode.id) ?? { before: [], after: [] };
    modes.set(mode.id, entry);
    entry[side].push(ms);
  }
}
for (const [config, modes] of table) {
  console.log(`${config}: mode, median ms after (each round), before (each round), after / before of the medians`);
  for (const [id, { before, after }] of modes) {
    if (!before.length || !after.length) continue;
    const ratio = median(after) / median(before);
    console.log(
      `  ${id}: after ${after.map((v) => v.toFixed(4)).join(' ')} | before ${before.map((v) => v.toFixed(4)).join(' ')} | ${ratio.toFixed(4)}`,
    );
  }
}
