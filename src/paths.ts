import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The same code runs from src/ (tsx), dist/src/ (npm) and the bundle, at different depths: find the package root
// by walking up to our package.json instead of counting "..".
let root: string | undefined;

export function packageRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'cuda-pipe'
    ) {
      root = dir;
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error('cannot find the cuda-pipe package root above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

export const builtinKernelsDir = (): string => join(packageRoot(), 'kernels');
export const builtinConfigsDir = (): string => join(packageRoot(), 'configs');
