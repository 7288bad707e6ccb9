import type { ChromeFormat } from '../format.js';
import { OWN_READS, ownKeeps, parseOwnTrace, sniffOwnTrace } from './parse.js';

/** The Chrome trace `cuda-pipe run --trace` writes (src/report/trace.ts). */
export const cudaPipe: ChromeFormat = {
  id: 'cuda-pipe',
  container: 'chrome',
  words: { name: 'a cuda-pipe trace', lacks: 'no otherData.tool of cuda-pipe', defaultStream: 'as the trace names it' },
  clock: 'own',
  reads: OWN_READS,
  keeps: ownKeeps,
  sniff: sniffOwnTrace,
  parse: (file, _top, records) => parseOwnTrace(file, records),
};
