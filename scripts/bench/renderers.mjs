// How long each timeline renderer takes on large synthetic traced reps, on the CPU: run after `npx tsc`, from the
// repository root: `node scripts/bench/renderers.mjs [ops ...]`. Prints one line per renderer and size, ms (best of
// three). The reps follow the depth-first chunk-per-stream layout (H2D, kernel, D2H per chunk) with each engine
// busy in turn, built from the recorded H200 fixture so that everything but the timeline is a real Result.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const root = join(import.meta.dirname, '..', '..');
const dist = (path) => import(join(root, 'dist', 'src', path));
const [
  { renderGantt },
  { renderSvg },
  { renderHtml },
  { renderTrace },
  { analyzeTracedRep },
  { parseResult },
  { makeStyle },
  { tableExporter },
  { markdownExporter },
] = await Promise.all([
  dist('report/gantt.js'),
  dist('report/svg.js'),
  dist('report/html.js'),
  dist('report/trace.js'),
  dist('report/timeline-common.js'),
  dist('result/load.js'),
  dist('report/style.js'),
  dist('report/exporters/table.js'),
  dist('report/exporters/markdown.js'),
]);

const template = JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'h200-balanced-16-traced.json'), 'utf8'));

/** A Result whose one traced rep runs `chunks` chunks over `streams` streams: 3 ops a chunk. */
function layoutResult(chunks, streams) {
  const mode = template.summary.mode;
  const h = (0.3 / chunks) * 16;
  const k = (0.18 / chunks) * 16;
  const ops = [];
  let kernelFree = 0;
  let d2hFree = 0;
  for (let c = 0; c < chunks; c += 1) {
    const stream = `s${c % streams}`;
    const base = {
      mode,
      device: 0,
      stream,
      chunk: c,
      buffer: 'input',
      kernel: null,
      bytes: 1 << 20,
      issuedMs: c * 0.0005,
    };
    const h2dStart = c * h;
    const kernelStart = Math.max(h2dStart + h, kernelFree);
    kernelFree = kernelStart + k;
    const d2hStart = Math.max(kernelFree, d2hFree);
    d2hFree = d2hStart + h;
    ops.push({ ...base, kind: 'h2d', startMs: h2dStart, endMs: h2dStart + h });
    ops.push({
      ...base,
      kind: 'kernel',
      buffer: null,
      kernel: 'fma',
      startMs: kernelStart,
      endMs: kernelFree,
      issuedMs: base.issuedMs + 0.0002,
    });
    ops.push({
      ...base,
      kind: 'd2h',
      buffer: 'output',
      startMs: d2hStart,
      endMs: d2hFree,
      issuedMs: base.issuedMs + 0.0004,
    });
  }
  const streamList = Array.from({ length: streams }, (_, i) => ({
    id: `s${i}`,
    flags: 'non-blocking',
    priority: null,
  }));
  const rep = { mode, device: 0, totalMs: d2hFree, issueMs: chunks * 0.0005, streams: streamList, ops };
  return parseResult({ ...template, timeline: { reps: [rep] } });
}

function best(run) {
  let fastest = Infinity;
  for (let i = 0; i < 3; i += 1) {
    const start = performance.now();
    run();
    fastest = Math.min(fastest, performance.now() - start);
  }
  return fastest;
}

const style = makeStyle({ isTTY: false });
const sizes =
  process.argv.length > 2
    ? process.argv
        .slice(2)
        .map((ops) => ({ name: `${ops} ops over 8 streams`, chunks: Math.ceil(Number(ops) / 3), streams: 8 }))
    : [
        { name: '4,096 chunks over 8 streams (12,288 ops)', chunks: 4096, streams: 8 },
        { name: '20,000 ops over 8 streams', chunks: 6667, streams: 8 },
        { name: '200,000 ops over 8 streams', chunks: 66_667, streams: 8 },
        { name: '200,000 ops over 4,096 streams', chunks: 66_667, streams: 4096 },
      ];

process.stdout.write(`node ${process.version}, ${process.platform}-${process.arch}; ms, best of 3\n`);
for (const size of sizes) {
  let result;
  const built = best(() => {
    result = layoutResult(size.chunks, size.streams);
  });
  const rep = result.timeline.reps[0];
  const row = {
    'build+validate': built,
    analysis: best(() => analyzeTracedRep(result, rep)),
    gantt: best(() => renderGantt(result, { style, columns: 160 })),
    svg: best(() => renderSvg(result)),
    html: best(() => renderHtml(result)),
    trace: best(() => renderTrace(result)),
    table: best(() => tableExporter.render([result], style)),
    markdown: best(() => markdownExporter.render([result], style)),
  };
  process.stdout.write(
    `${size.name}: ${Object.entries(row)
      .map(([k, v]) => `${k} ${v.toFixed(0)}`)
      .join(', ')}\n`,
  );
}
