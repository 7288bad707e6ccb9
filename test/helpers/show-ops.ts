import type { Op } from '../../src/plan/types.js';

/** Ops as short words for asserting their order: `h2d3@s1`, `k3@s1`, `host3@s1`, `record e@s0`, `wait e@s1`. */
export const showOps = (ops: readonly Op[]): string[] =>
  ops.map((o) => {
    switch (o.kind) {
      case 'copy':
        return `${o.direction}${o.chunk}@${o.stream}`;
      case 'kernel':
        return `k${o.chunk}@${o.stream}`;
      case 'host':
        return `host${o.chunk}@${o.stream}`;
      case 'record':
        return `record ${o.event}@${o.stream}`;
      case 'wait':
        return `wait ${o.event}@${o.stream}`;
      default:
        return o.kind;
    }
  });
