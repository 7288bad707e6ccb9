import type { ChromeFormat } from '../format.js';
import { KINETO_DEFAULT_STREAM, KINETO_READS, kinetoContext, kinetoKeeps, parseKineto, sniffKineto } from './parse.js';

/** PyTorch profiler (Kineto) Chrome traces: `torch.profiler`'s `export_chrome_trace` and its TensorBoard handler. */
export const kineto: ChromeFormat = {
  id: 'kineto',
  container: 'chrome',
  words: {
    name: 'a PyTorch profiler (Kineto) trace',
    lacks: 'no kernel, gpu_memcpy or cuda_runtime events',
    defaultStream: `stream ${KINETO_DEFAULT_STREAM}, as CUPTI numbers it; an assumption`,
  },
  clock: 'wall',
  reads: KINETO_READS,
  keeps: kinetoKeeps,
  context: kinetoContext,
  sniff: sniffKineto,
  parse: parseKineto,
};
