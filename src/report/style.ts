import { Chalk, type ChalkInstance } from 'chalk';
import type { Terminal } from './width.js';

/** Colour only for a terminal, and never when NO_COLOR is set (https://no-color.org). */
export function makeStyle(stream: Terminal = process.stdout, env: NodeJS.ProcessEnv = process.env): ChalkInstance {
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  return new Chalk({ level: noColor || !stream.isTTY ? 0 : 1 });
}

export type Style = ChalkInstance;
