import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { hostView } from '../../../cuda/host-view.js';
import { notRegularFile } from '../../../files/read.js';
import { workerEventQuery } from '../../../cuda/worker-event.js';
import { builtIn } from './functions.js';
import {
  CONTROL_HEADER,
  EVENT_QUERY_GAP_MS,
  type Region,
  type RegionView,
  type StageFunction,
  type TaskMessage,
  type TaskWait,
  type WorkerMessage,
  type WorkerSetup,
} from './types.js';

// One worker thread of a pool: loads the pool's functions once, then runs the tasks the main thread sends, one at a
// time, in the order sent. The chunk's memory is opened here by address (src/cuda/host-view.ts), never copied.

// A user's console.log must not reach our stdout, which may carry a document (run --json -): everything this
// thread writes goes to stderr. (Worker's own `stdout: true` would do it from the pool, but its stream keeps an idle
// pool's process alive.)
process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;

const setup = workerData as WorkerSetup;
const port = parentPort;
if (!port) throw new Error('src/kinds/host/workers/worker.js runs only as a worker thread of a WorkerPool');
const send = (message: WorkerMessage) => port.postMessage(message);
const now = () => performance.timeOrigin + performance.now();

const view = (region: Region): RegionView => ({
  buffer: region.buffer,
  offset: region.offset,
  bytes: hostView(region.address, region.bytes),
});

const functions = new Map<string, StageFunction>();
/** Tasks sent and not yet answered, the one running first: the pool sends the next before this one ends. */
const waiting: TaskMessage[] = [];
// A module that does not load is reported and the worker takes no task: the pool ends every worker and says why.
if (await loadAll()) {
  port.on('message', (message: TaskMessage) => {
    waiting.push(message);
    if (waiting.length === 1) void drain();
  });
  send({ kind: 'ready' });
}

async function loadAll(): Promise<boolean> {
  for (const [name, spec] of Object.entries(setup.functions)) {
    if (spec.kind !== 'module') {
      functions.set(name, builtIn(spec));
      continue;
    }
    send({ kind: 'loading', fn: name, path: spec.path });
    // Checked again here, as the file may have changed since the pool checked it: import() of a FIFO blocks this
    // thread in a read that terminate() cannot end.
    const unfit = notRegularFile(spec.path);
    const loaded = unfit === null ? await load(spec.path, spec.export) : unfit;
    if (typeof loaded === 'string') {
      send({ kind: 'load-failed', fn: name, path: spec.path, message: loaded });
      return false;
    }
    functions.set(name, loaded);
  }
  return true;
}

async function load(path: string, name: string): Promise<StageFunction | string> {
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  const fn = module[name];
  if (typeof fn === 'function') return fn as StageFunction;
  const functionNames = Object.keys(module).filter((key) => typeof module[key] === 'function');
  return `it has no exported function '${name}' (its exported functions: ${functionNames.join(', ') || 'none'})`;
}

/** Runs the tasks the pool sent one at a time, also when a user's function is async. */
async function drain(): Promise<void> {
  for (let next = waiting[0]; next; next = waiting[0]) {
    await run(next);
    waiting.shift();
  }
}

const control = new Int32Array(setup.control);
const running = new Int32Array(setup.running);
const RUNNING_ID = 2 * setup.index;

/** Tells the pool, through shared memory, which task's function runs and since when: its deadline counts from there. */
function runningTask(id: number | null, startedAt = 0): void {
  Atomics.store(running, RUNNING_ID + 1, Math.round(startedAt - setup.originMs));
  Atomics.store(running, RUNNING_ID, id === null ? 0 : id + 1);
}
/** cudaEventQuery's "not ready" (cudaErrorNotReady). */
const NOT_READY = 600;

/**
 * Sleeps until the task may run (its flag raised, or its event complete); throws when its generation was cancelled or
 * its event failed.
 */
function waitFor(wait: TaskWait): void {
  const flag = CONTROL_HEADER + wait.flag;
  const done = wait.kind === 'event' ? eventReady(wait.event, wait.library) : () => false;
  for (;;) {
    const raised = Atomics.load(control, flag);
    if (raised >= wait.generation || done()) return;
    if (Atomics.load(control, 0) >= wait.generation) throw new Error('cancelled: the rep it belonged to failed');
    Atomics.wait(control, flag, raised, EVENT_QUERY_GAP_MS);
  }
}

function eventReady(event: bigint, library: string): () => boolean {
  const query = workerEventQuery(library);
  return () => {
    const code = query(event);
    if (code === NOT_READY) return false;
    if (code !== 0) throw new Error(`cudaEventQuery answered ${code} for the event after the chunk's D2H`);
    return true;
  };
}

async function run({ id, task }: TaskMessage): Promise<void> {
  try {
    if (task.waitFor) waitFor(task.waitFor);
  } catch (error) {
    const at = now();
    send({
      kind: 'failed',
      id,
      message: error instanceof Error ? error.message : String(error),
      startedAt: at,
      endedAt: at,
    });
    return;
  }
  const startedAt = now();
  try {
    const fn = functions.get(task.fn);
    if (!fn) throw new Error(`the pool has no function '${task.fn}'`);
    runningTask(id, startedAt);
    const value: unknown = await fn({
      chunk: task.chunk,
      worker: setup.index,
      regions: task.regions.map(view),
      targets: (task.targets ?? []).map(view),
    });
    runningTask(null);
    send({ kind: 'done', id, value, startedAt, endedAt: now() });
  } catch (error) {
    runningTask(null);
    send({
      kind: 'failed',
      id,
      message: error instanceof Error ? error.message : String(error),
      startedAt,
      endedAt: now(),
    });
  }
}
