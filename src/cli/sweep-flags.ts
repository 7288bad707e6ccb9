import type { WaitStrategy } from '../exec/wait.js';
import type { IssueOrder } from '../vocabulary.js';

/** The flags of `cuda-pipe sweep`, as commander parses them (the kinds' own flags beside them, by key). */
export interface SweepFlags {
  streams?: number[];
  chunks?: number[];
  order?: IssueOrder[];
  set: string[];
  maxTime?: number;
  exhaustive?: boolean;
  dryRun?: boolean;
  device?: number;
  devices?: number[] | 'all';
  gate?: boolean;
  verify: boolean;
  wait: WaitStrategy;
  json?: string;
  md?: string;
  svg?: string;
  html?: string;
  csv?: string;
  bmf?: string;
  gab?: string;
}
