// npm's prepare script runs `node scripts/build-fresh.mjs || npm run build`: this exits 0, and the build is skipped,
// when dist/ already holds a build of the sources as they are, else 1. npm runs prepare on `npm ci`, and again when
// the first `npx cuda-pipe` links the checkout into npx's cache (npm 9 and later install a project's own bin that
// way, and run the link's prepare): that second build took 56 to 80 s and changed nothing (issue 39). A build is
// fresh when the CLI's bundle (dist/cli/cuda-pipe.js, written last) is no older than any input of the build, every
// source has its compiled file, and the installed packages (node_modules/.package-lock.json) are no newer.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..');

const filesUnder = (dir) =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => join(e.parentPath ?? e.path, e.name))
    : [];

/** Why dist/ must be built again, or null where it holds a build of the sources as they are. */
function staleBecause() {
  const bundle = join(root, 'dist', 'cli', 'cuda-pipe.js');
  if (!existsSync(bundle)) return 'dist/cli/cuda-pipe.js is missing';
  const built = statSync(bundle).mtimeMs;
  const sources = filesUnder(join(root, 'src')).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  const missing = sources.find((f) => !existsSync(join(root, 'dist', relative(root, f)).replace(/\.ts$/, '.js')));
  if (missing) return `${relative(root, missing)} has no compiled file in dist/`;
  const inputs = [
    ...filesUnder(join(root, 'src')),
    ...['tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json', 'scripts/bundle-cli.mjs'].map(
      (f) => join(root, f),
    ),
    join(root, 'node_modules', '.package-lock.json'),
  ].filter((f) => existsSync(f));
  const newer = inputs.find((f) => statSync(f).mtimeMs > built);
  return newer ? `${relative(root, newer)} is newer than the build` : null;
}

const why = staleBecause();
if (why) {
  process.stderr.write(`cuda-pipe: building (${why})\n`);
  process.exit(1);
}
process.stderr.write('cuda-pipe: dist/ holds a build of these sources; not built again (npm run build forces one)\n');
