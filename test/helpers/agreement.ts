import type { Agreement } from '../../src/measure/runner.js';

/**
 * The agreements of `ranks` ranks in one process, as NCCL's all-reduce of their votes would give them: each call
 * waits until every rank cast its vote of the same round, then every rank gets the element-wise "any". `log` keeps
 * each round's subject, to show that the ranks asked the same questions in the same order.
 */
export function ranksAgreeing(ranks: number): { agreements: Agreement[]; log: string[][] } {
  const rounds: Array<{
    votes: Array<readonly boolean[]>;
    about: string[];
    resolve: Array<(answer: boolean[]) => void>;
  }> = [];
  const next = Array.from({ length: ranks }, () => 0);
  const log: string[][] = Array.from({ length: ranks }, () => []);
  const agreements = Array.from(
    { length: ranks },
    (_, rank): Agreement => ({
      any(votes, about) {
        const index = next[rank] ?? 0;
        next[rank] = index + 1;
        log[rank]?.push(about);
        rounds[index] ??= { votes: [], about: [], resolve: [] };
        const round = rounds[index];
        return new Promise((resolve) => {
          round.votes.push(votes);
          round.about.push(about);
          round.resolve.push(resolve);
          if (round.votes.length < ranks) return;
          const width = Math.max(...round.votes.map((v) => v.length));
          const answer = Array.from({ length: width }, (_, i) => round.votes.some((v) => v[i] === true));
          for (const r of round.resolve) r([...answer]);
        });
      },
    }),
  );
  return { agreements, log };
}
