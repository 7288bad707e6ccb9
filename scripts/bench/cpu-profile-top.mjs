// The self time of a CPU profile (node --cpu-prof) by script and by function, most first: where a start spends its
// CPU. Used for docs/measurements/2026-11-28-cli-start-2/breakdown.log.
// Usage: node scripts/bench/cpu-profile-top.mjs FILE.cpuprofile [N]
import { readFileSync } from 'node:fs';

const [file, count = '15'] = process.argv.slice(2);
if (!file) throw new Error('pass a .cpuprofile file (node --cpu-prof --cpu-prof-dir DIR ...)');
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const byScript = new Map();
const byFunction = new Map();
const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);
let total = 0;
profile.samples.forEach((id, i) => {
  const { functionName, url, lineNumber } = nodes.get(id).callFrame;
  const script = url.split('/').pop() || `(${functionName || 'anonymous'})`;
  const us = profile.timeDeltas[i];
  total += us;
  add(byScript, script.startsWith('((') ? functionName : script, us);
  add(byFunction, `${functionName || '(anonymous)'} ${script}:${lineNumber + 1}`, us);
});
const ms = (us) => (us / 1000).toFixed(1).padStart(7);
const top = (map) => [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(count));
console.log(`${ms(total)} ms sampled`);
console.log('by script:');
for (const [key, us] of top(byScript)) console.log(`${ms(us)}  ${key}`);
console.log('by function:');
for (const [key, us] of top(byFunction)) console.log(`${ms(us)}  ${key}`);
