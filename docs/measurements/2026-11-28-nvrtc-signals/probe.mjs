// Which SIGTERM handler is in place while NVRTC compiles: reads the disposition (sigaction) every millisecond from the
// JS thread while the compile runs in this process (compileHere), and prints each change with its time.
// Usage, from the repository root after `npm run build`: node docs/measurements/2026-11-28-nvrtc-signals/probe.mjs N
// (N templates never instantiated, beside one kernel; 0 for the kernel alone).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(join(process.cwd(), 'package.json'));
const koffi = require('koffi');
const sigaction = koffi.load('libc.so.6').func('int sigaction(int sig, void *act, _Out_ uint8_t *old)');
const handler = () => {
  const old = new Uint8Array(152);
  sigaction(15, null, old);
  return Buffer.from(old.subarray(0, 8)).readBigUInt64LE(0).toString(16);
};
process.on('SIGTERM', () => {});
const { openNvrtc } = await import(pathToFileURL(join(process.cwd(), 'dist', 'src', 'cuda', 'nvrtc.js')).href);
const nvrtc = openNvrtc();
const n = Number(process.argv[2] ?? 0);
const templates = Array.from({ length: n }, (_, i) => `template<class T>__device__ T f${i}(T x){return x*${i}+1;}`);
const source = `${templates.join('\n')}\nextern "C" __global__ void k(float *x) { x[0] = 1.0f; }\n`;
let last = handler();
console.log(`${n} templates; Node's SIGTERM handler before the compile: 0x${last}`);
const start = performance.now();
const timer = setInterval(() => {
  const now = handler();
  if (now !== last) console.log(`${(performance.now() - start).toFixed(0)} ms: handler 0x${now}`);
  last = now;
}, 1);
const outcome = await nvrtc.compileHere(source, 'probe.cu', ['--gpu-architecture=sm_90']);
clearInterval(timer);
console.log(`compiled (${outcome.ok}) in ${(performance.now() - start).toFixed(0)} ms; handler after: 0x${handler()}`);
