// How many zod schemas a command builds as it starts, and in which chunk of dist/cli/ (issue 40's start targets):
// a copy of the built CLI under /tmp has zod's `$constructor` count every schema it makes, and the loader count what
// each chunk's own code made (its nested chunks apart), with the schemas the chunk names. The copy runs without its
// code cache, which changes nothing counted. Usage, after `npm run build`:
//   node scripts/bench/zod-instances.mjs report test/fixtures/h200-balanced-16-traced.json
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const copy = mkdtempSync(join(tmpdir(), 'zod-instances-'));
const cli = join(copy, 'dist', 'cli');
cpSync(join(root, 'dist', 'cli'), cli, { recursive: true, filter: (path) => !path.endsWith('.cache') });
cpSync(join(root, 'package.json'), join(copy, 'package.json'));
const patch = (file, from, to) => {
  const text = readFileSync(file, 'utf8');
  if (!text.includes(from)) throw new Error(`${file} lacks ${from}: the build changed, and so must this script`);
  writeFileSync(file, text.replace(from, to));
};
const zodChunk = readdirSync(cli).find((name) =>
  readFileSync(join(cli, name), 'utf8').includes('function $constructor('),
);
if (!zodChunk) throw new Error('no chunk holds zod');
patch(
  join(cli, zodChunk),
  '_zodDesc.value = new Internals(def);',
  '_zodDesc.value = new Internals(def); globalThis.__made = (globalThis.__made ?? 0) + 1;',
);
const loader = join(cli, 'cuda-pipe.js');
patch(
  loader,
  '    script.runInThisContext()',
  '    const made = globalThis.__made ?? 0; const mine = { name, made: 0, nested: 0 }; (globalThis.__chunks ??= []).push(mine); (globalThis.__stack ??= []).push(mine);\n    script.runInThisContext()',
);
patch(
  loader,
  '    return module.exports;\n  };',
  '    mine.made = (globalThis.__made ?? 0) - made; globalThis.__stack.pop(); const outer = globalThis.__stack.at(-1); if (outer) outer.nested += mine.made;\n    return module.exports;\n  };',
);
patch(
  loader,
  "  load('start.js');\n}",
  "  process.on('exit', () => process.stderr.write(JSON.stringify({ made: globalThis.__made ?? 0, chunks: (globalThis.__chunks ?? []).map((c) => ({ name: c.name, own: c.made - c.nested })).filter((c) => c.own > 0) }) + '\\n'));\n  load('start.js');\n}",
);
const run = spawnSync(process.execPath, [loader, ...process.argv.slice(2)], { cwd: root, encoding: 'utf8' });
const counted = JSON.parse(run.stderr.trim().split('\n').at(-1));
console.log(`cuda-pipe ${process.argv.slice(2).join(' ')}: exit ${run.status}, ${counted.made} zod schemas built`);
for (const { name, own } of counted.chunks) {
  const names = [...readFileSync(join(cli, name), 'utf8').matchAll(/\b(\w+Schema) = /g)].map((m) => m[1]);
  console.log(`${String(own).padStart(6)}  ${name}: ${[...new Set(names)].join(', ') || '(no named schema)'}`);
}
rmSync(copy, { recursive: true, force: true });
