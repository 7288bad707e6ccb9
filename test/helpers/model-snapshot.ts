import { readdirSync } from 'node:fs';
import { chunkUnits } from '../../src/chunking.js';
import { type DeviceParts, idealMs, layoutBound, type LayoutShape } from '../../src/measure/bound.js';
import { workloadFloor } from '../../src/measure/floor.js';
import { modelAnalysis } from '../../src/measure/model.js';
import { loadResults } from '../../src/result/load.js';

// The overlap model's every number on the recorded Results and on a grid of made-up parts, as one JSON document:
// test/golden/model-bounds.json holds it as the model computed it before the bound was driven by the stage table,
// so a refactor of the model that changes any number fails.

const FIXTURES = 'test/fixtures';

/** Every overlapped mode of every recorded Result, bounded again from the Result's other modes. */
function recorded(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const file of readdirSync(FIXTURES).filter((f) => f.endsWith('.json') && !f.includes('probe'))) {
    for (const [r, result] of loadResults(`${FIXTURES}/${file}`).entries()) {
      for (const mode of result.modes.filter((m) => m.role.kind === 'overlapped')) {
        const device = result.devices.find((d) => d.index === mode.device);
        const facts = {
          buffers: result.buffers.map((b) => ({ role: b.role })),
          kernels: result.kernels.length,
          copyEngines: device?.asyncEngineCount ?? 0,
          gated: result.policy.gate,
          maxChunks: chunkUnits(result.pipeline.elements, result.pipeline.align),
        };
        const analysed = modelAnalysis(mode, result.modes, facts, 200, { kinds: ['non-blocking'], legacyOp: false });
        out[`${file}[${r}] ${mode.id}`] = analysed && { bound: analysed.bound, model: analysed.model };
      }
    }
  }
  return out;
}

const BASE: DeviceParts = {
  h2dMs: 4.863,
  d2hMs: 4.869,
  kernelWholeMs: 3.695,
  h2dBytes: 256 * 2 ** 20,
  d2hBytes: 128 * 2 ** 20,
  h2dCopiesPerChunk: 2,
  d2hCopiesPerChunk: 1,
  kernelsPerChunk: 2,
  linkMs: 5.387,
  linkPieces: 32,
  copyEngines: 2,
  h2dOpMs: 0.004,
  d2hOpMs: 0.005,
  launchOpMs: 0.003,
  hostCopyMs: 0.002,
  hostLaunchMs: 0.0025,
  hostSyncMs: 0.001,
  gated: false,
};

/** Parts and layouts at every corner the bound branches on: copy engines, missing stages, tiny stages, graph issue. */
function grid(): Record<string, unknown> {
  const variants: Record<string, Partial<DeviceParts>> = {
    base: {},
    gated: { gated: true },
    noLink: { linkMs: null },
    noD2H: { d2hMs: 0, d2hBytes: 0, d2hCopiesPerChunk: 0 },
    noH2D: { h2dMs: 0, h2dBytes: 0, h2dCopiesPerChunk: 0 },
    noKernels: { kernelWholeMs: 0, kernelsPerChunk: 0 },
    copiesOnly: { kernelWholeMs: 0, kernelsPerChunk: 0, d2hMs: 0, d2hBytes: 0, d2hCopiesPerChunk: 0 },
    tinyStages: { h2dMs: 0.001, d2hMs: 0.002, kernelWholeMs: 0.001 },
    computeBound: { kernelWholeMs: 30.5 },
    oneEngine: { copyEngines: 1 },
    noEngine: { copyEngines: 0 },
    noSyncCost: { hostSyncMs: undefined },
  };
  const layouts: Record<string, (chunks: number) => LayoutShape> = {
    stream: (chunks) => ({ chunks, streams: 4, issue: 'stream', kernelsChunkedMs: null }),
    chunkedKernels: (chunks) => ({ chunks, streams: 4, issue: 'stream', kernelsChunkedMs: 3.9 }),
    graph: (chunks) => ({ chunks, streams: 8, issue: 'graph', kernelsChunkedMs: 3.5 }),
    graphWhole: (chunks) => ({ chunks, streams: 2, issue: 'graph', kernelsChunkedMs: null }),
  };
  const out: Record<string, unknown> = {};
  for (const [name, change] of Object.entries(variants)) {
    const parts = { ...BASE, ...change };
    for (const [shape, at] of Object.entries(layouts)) {
      for (const chunks of [1, 2, 16, 64]) {
        const layout = at(chunks);
        out[`${name} ${shape} ${chunks}`] = {
          bound: layoutBound(parts, layout),
          ideal: idealMs(parts, layout.kernelsChunkedMs),
          floor: workloadFloor(parts, layout, 1024, chunks === 64 ? 20 : null),
        };
      }
    }
  }
  return out;
}

export const modelSnapshot = () => JSON.parse(JSON.stringify({ recorded: recorded(), grid: grid() })) as unknown;
