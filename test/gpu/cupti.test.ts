import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { analyzeRep, opInterval } from '../../src/analysis/timeline.js';
import { CuptiActivity, matchActivity, openCupti } from '../../src/cuda/cupti.js';
import { openRuntime } from '../../src/cuda/runtime.js';
import { makeWaiter } from '../../src/exec/wait.js';
import { RunResultSchema } from '../../src/result/schema.js';
import { runCli } from '../helpers/gpu-cli.js';
import { gpuSkipReason } from '../helpers/gpu.js';

// Each test skips on its own, with the reason: no GPU, or a GPU host without libcupti.
function cuptiSkipReason(): string | null {
  const gpu = gpuSkipReason();
  if (gpu) return gpu;
  const cupti = openCupti();
  return cupti instanceof CuptiActivity ? null : `no CUPTI here: ${cupti.unavailable}`;
}
const cupti = { skip: cuptiSkipReason() ?? false };
const out = mkdtempSync(join(tmpdir(), 'cuda-pipe-cupti-'));
const MiB = 1 << 20;

describe('CUPTI activity on a real device', () => {
  it('records each copy and memset with its bytes and an engine time inside the events around it', cupti, async (t) => {
    const rt = openRuntime();
    const activity = openCupti() as CuptiActivity;
    const bytes = 16 * MiB;
    const host = rt.memory.hostAlloc(bytes, 'pinned');
    const device = rt.memory.malloc(bytes);
    const stream = rt.streams.create({ nonBlocking: true });
    const events = Array.from({ length: 4 }, () => rt.streams.createEvent({ timing: true }));
    try {
      const { push, pop } = activity.correlationThunks();
      const waiter = makeWaiter(rt, 'poll');
      // CUPTI sets itself up inside the first call it records (milliseconds): a first recording pays for that, and
      // recording stays on for the next collection, whose first call is a harmless query (as the runner does).
      activity.begin();
      // On the H200 the first correlated call after CUPTI starts recording waited ~0.7 ms: the warm-up is correlated
      // too.
      assert.equal(push(99), 0);
      assert.equal(rt.memory.copyThunk(device, host, MiB, 'h2d', stream)(), 0);
      assert.equal(pop(), 0);
      rt.streams.record(events[0]!, stream);
      assert.equal(await waiter.event(events[0]!), 0);
      await activity.collect();
      activity.begin();
      push(0);
      rt.streams.queryCode(stream);
      pop();
      const calls = [
        () => rt.memory.copyThunk(device, host, bytes, 'h2d', stream)(),
        () => rt.memory.memsetThunk(device, 7, MiB, stream)(),
        () => rt.memory.copyThunk(host, device, bytes, 'd2h', stream)(),
      ];
      rt.streams.record(events[0]!, stream);
      calls.forEach((call, i) => {
        assert.equal(push(i + 1), 0);
        assert.equal(call(), 0);
        assert.equal(pop(), 0);
        rt.streams.record(events[i + 1]!, stream);
      });
      // Never a blocking wait while CUPTI may be waiting on a callback: poll, yielding to the event loop.
      assert.equal(await waiter.event(events[3]!), 0);
      const collection = await activity.collect();
      activity.stop();
      const copy = { kind: 'memcpy', memsets: false } as const;
      const matched = matchActivity(collection, [copy, { kind: 'memset', memsets: false }, copy]);
      t.diagnostic(
        JSON.stringify({ records: collection.records, dropped: collection.dropped, malformed: collection.malformed }),
      );
      assert.equal(matched.wrongKind, 0);
      assert.equal(collection.malformed, 0);
      const mine = collection.records.filter((r) => collection.external.has(r.correlationId));
      assert.deepEqual(
        mine.map((r) => [r.kind, r.bytes]),
        [
          ['memcpy', bytes],
          ['memset', MiB],
          ['memcpy', bytes],
        ],
      );
      matched.spans.forEach((span, i) => {
        assert.ok(span, `call ${i} has a record`);
        const engineMs = (span.end - span.start) / 1e6;
        const eventMs = rt.streams.elapsedMs(events[i]!, events[i + 1]!);
        t.diagnostic(`call ${i}: engine ${engineMs.toFixed(4)} ms, events ${eventMs.toFixed(4)} ms`);
        // The events bracket the op on its own stream: the engine's time fits inside, short by the time the host took
        // to issue the call after the event (on the H200 up to 0.11 ms with CUPTI's API records on), never longer.
        assert.ok(engineMs > 0 && engineMs <= eventMs + 0.005, `engine ${engineMs} ms vs events ${eventMs} ms`);
        // A copy's engine time is the copy itself: 16 MiB over PCIe gen5 x16 at 40 to 64 GB/s (55 GB/s measured alone).
        if (i !== 1) {
          const gbps = bytes / (engineMs * 1e6);
          assert.ok(gbps >= 40 && gbps <= 64, `call ${i}: ${gbps.toFixed(1)} GB/s on the engine`);
        }
      });
    } finally {
      activity.stop();
      for (const e of events) rt.streams.destroyEvent(e);
      rt.streams.destroy(stream);
      rt.memory.free(device);
      rt.memory.freeHost(host);
    }
  });

  it(
    "times the balanced pipeline's traced rep by CUPTI: each copy near its time alone, no engine busier than the rep",
    cupti,
    (t) => {
      const json = join(out, 'balanced.json');
      const { code, stderr } = runCli(['run', '--reps', '5', '--warmup', '2', '--json', json]);
      assert.equal(code, 0, stderr);
      const result = RunResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
      const rep = result.timeline?.reps[0];
      assert.ok(rep, 'a traced rep');
      assert.equal(rep.timing?.source, 'cupti', rep.timing?.note);
      for (const op of rep.ops) {
        assert.ok(
          op.engineStartMs !== undefined && op.engineEndMs !== undefined,
          `${op.kind} #${op.chunk} has engine times`,
        );
        assert.ok(
          op.startMs <= op.engineStartMs && op.engineStartMs < op.engineEndMs && op.engineEndMs <= op.endMs,
          JSON.stringify(op),
        );
      }
      // A copy alone: the stage mode's whole-buffer copy, scaled to the chunk's bytes (16 MiB of 256 MiB).
      const alone = (stage: 'h2d' | 'd2h') => {
        const mode = result.modes.find((m) => m.role.kind === 'stage' && m.role.stage === stage);
        assert.ok(mode, `a ${stage} stage mode`);
        return mode.stats.median / 16;
      };
      const ratios = rep.ops
        .filter((op) => op.kind === 'h2d' || op.kind === 'd2h')
        .map((op) => {
          const { start, end } = opInterval(op);
          return {
            kind: op.kind,
            chunk: op.chunk,
            ratio: (end - start) / alone(op.kind as 'h2d' | 'd2h'),
            queuedMs: op.engineStartMs! - op.startMs,
          };
        });
      t.diagnostic(
        `engine time / time alone: ${JSON.stringify(ratios.map((r) => `${r.kind}#${r.chunk} ${r.ratio.toFixed(3)} (queued ${r.queuedMs.toFixed(3)} ms)`))}`,
      );
      t.diagnostic(
        `timing: ${rep.timing?.note}; traced rep ${rep.totalMs.toFixed(3)} ms, issued in ${rep.issueMs.toFixed(3)} ms, first op at ${Math.min(...rep.ops.map((o) => o.startMs)).toFixed(3)} ms`,
      );
      const analysis = analyzeRep(rep, { copyEngines: result.devices[0]?.asyncEngineCount ?? 2 });
      t.diagnostic(
        `busy: ${JSON.stringify(analysis.busy)}, overlap: ${JSON.stringify(analysis.overlap)}, idle: ${JSON.stringify(analysis.idle)}`,
      );
      for (const kind of ['h2d', 'd2h', 'kernel'] as const) {
        const busyMs = rep.ops
          .filter((op) => op.kind === kind)
          .reduce((sum, op) => sum + (op.engineEndMs! - op.engineStartMs!), 0);
        // Copies of one direction share their engine and kernels follow one another here: their sum fits in the rep.
        assert.ok(busyMs <= rep.totalMs, `${kind} engine busy ${busyMs} ms in a ${rep.totalMs} ms rep`);
      }
      const within = ratios.filter((r) => Math.abs(r.ratio - 1) <= 0.05).length;
      assert.ok(
        within >= 1 && ratios.every((r) => r.ratio > 0.9),
        `copies near their time alone: ${within} of ${ratios.length}`,
      );
    },
  );
});
