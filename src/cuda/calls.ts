import { cudaFailure } from './error.js';
import type { Bindings } from './bindings.js';

/**
 * What every concern's wrapper needs from the runtime: the bindings, and turning a result code into the right
 * error. Out-parameters reuse one BigUint64Array, which koffi fills without allocating.
 */
export class Calls {
  private readonly out = new BigUint64Array(1);

  constructor(readonly fn: Bindings) {}

  check(code: number, api: string, context?: string): void {
    if (code !== 0) throw this.failure(code, api, context);
  }

  failure(code: number, api: string, context?: string): Error {
    return cudaFailure(api, code, this.errorName(code), this.errorString(code), context);
  }

  errorName(code: number): string {
    return this.fn.getErrorName(code) as string;
  }

  errorString(code: number): string {
    return this.fn.getErrorString(code) as string;
  }

  intOut(call: (out: number[]) => unknown, api: string, context?: string): number {
    const out = [0];
    this.check(call(out) as number, api, context);
    return out[0] ?? 0;
  }

  pointerOut(call: (out: BigUint64Array) => unknown, api: string, context?: string): bigint {
    this.out[0] = 0n;
    this.check(call(this.out) as number, api, context);
    return this.out[0] ?? 0n;
  }
}
