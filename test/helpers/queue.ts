import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

// `npm test` runs every test file in a few long-lived processes instead of one process per file: on two cores the
// 140-odd fresh Node.js processes, each loading the modules its file imports, took about a sixth of the suite's CPU
// time. Each process (test/queue/worker-N.test.ts) takes the next file no process has taken yet, so a slow file
// does not hold up a fixed share of the others, and runs it as a suite named by its path. scripts/test.mjs makes
// the queue folder and names it in CUDA_PIPE_TEST_QUEUE; a file is taken by creating its entry there, which only
// one process can do. Two processes, one a core: on the 2-core machine four made each run slower, by 1 to 13 s over
// three
// rounds taken in turns, as they fought over the cores and memory (docs/measurements/2026-11-26-test-speed-4/).

const distTest = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The compiled test files directly in each folder under `root`. */
const testsIn = (root: string, skip: ReadonlySet<string> = new Set()): string[] =>
  readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !skip.has(entry.name))
    .flatMap((folder) =>
      readdirSync(join(root, folder.name))
        .filter((name) => name.endsWith('.test.js'))
        .map((name) => join(root, folder.name, name)),
    );

/**
 * Every compiled test file: under dist/test/<folder>/ (the queue's own workers left out), the kinds' list's own in
 * dist/src/kinds/, and each kind's in dist/src/kinds/<kind>/.
 */
export function testFiles(): string[] {
  const kinds = join(distTest, '..', 'src', 'kinds');
  const own = readdirSync(kinds)
    .filter((name) => name.endsWith('.test.js'))
    .map((name) => join(kinds, name));
  return [...testsIn(distTest, new Set(['queue'])), ...own, ...testsIn(kinds)].sort();
}

/** Longest first, by the times the last run recorded, so that the slow files do not start last. */
export function longestFirst(files: readonly string[], durations: Readonly<Record<string, number>>): string[] {
  return [...files].sort(
    (a, b) => (durations[relative(distTest, b)] ?? 0) - (durations[relative(distTest, a)] ?? 0) || a.localeCompare(b),
  );
}

function claim(queue: string, file: string): boolean {
  try {
    mkdirSync(join(queue, relative(distTest, file).replaceAll('/', '__')));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * The CPU milliseconds this process's finished children have spent (user and system, from Linux's /proc: cutime and
 * cstime in ticks of 10 ms); null where there is no /proc.
 */
function childrenCpuMs(): number | null {
  if (!existsSync('/proc/self/stat')) return null;
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

const cpuMs = (usage: NodeJS.CpuUsage) => Math.round((usage.user + usage.system) / 1000);

/**
 * One queue worker: runs files until none is left, and records how long each took for the next run's order, with
 * the CPU time it took in this process and in the processes it started: on a shared machine the clock says little.
 */
export async function runQueue(): Promise<void> {
  const queue = process.env.CUDA_PIPE_TEST_QUEUE;
  if (!queue || !existsSync(queue)) {
    test('queue worker', {
      skip: 'run through `npm test` (scripts/test.mjs), which makes the queue; `node --test dist/test/*/*.test.js` runs each file in a process of its own',
    }, () => {});
    return;
  }
  const recorded = join(distTest, 'durations.json');
  const durations = existsSync(recorded) ? (JSON.parse(readFileSync(recorded, 'utf8')) as Record<string, number>) : {};
  for (const file of longestFirst(testFiles(), durations)) {
    if (!claim(queue, file)) continue;
    const name = relative(distTest, file);
    const started = performance.now();
    const cpu = process.cpuUsage();
    const children = childrenCpuMs();
    await describe(name, async () => {
      await import(pathToFileURL(file).href);
    });
    const childrenAfter = childrenCpuMs();
    const childrenMs = children === null || childrenAfter === null ? '' : childrenAfter - children;
    appendFileSync(
      join(queue, 'times.tsv'),
      `${name}\t${Math.round(performance.now() - started)}\t${cpuMs(process.cpuUsage(cpu))}\t${childrenMs}\n`,
    );
  }
}
