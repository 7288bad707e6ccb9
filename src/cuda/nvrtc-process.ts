import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DeviceFailure } from '../errors.js';
import { packageRoot } from '../paths.js';

export type NvrtcCompileOutcome =
  | { readonly ok: true; readonly cubin: Uint8Array; readonly ptx: string; readonly log: string }
  /** `options`: NVRTC refused an option before compiling (the log names it); `source`: the source did not compile. */
  | { readonly ok: false; readonly failed: 'options' | 'source'; readonly log: string };

/** What the parent sends the compiler child on its stdin, as one JSON document. */
export interface CompileRequest {
  readonly library: string;
  readonly source: string;
  readonly name: string;
  readonly options: readonly string[];
  /** The parent's pid: the child leaves at once if it is no longer its parent (it died before the child armed). */
  readonly parent: number;
}

/** What the child writes on its stdout: the outcome, the CUBIN in base64, or what NVRTC threw. */
export type CompileReply =
  | { readonly ok: true; readonly cubin: string; readonly ptx: string; readonly log: string }
  | { readonly ok: false; readonly failed: 'options' | 'source'; readonly log: string }
  | { readonly error: string };

/** The compiled child script (tsc's output, which the package and the bundle carry), or null before a build. */
export function compilerChildScript(): string | null {
  const script = join(packageRoot(), 'dist', 'src', 'cuda', 'nvrtc-child.js');
  return existsSync(script) ? script : null;
}

/**
 * Runs one NVRTC compile in a child process of its own and returns its outcome. The child is in a process group
 * of its own, so a Ctrl-C at the terminal reaches only this process, whose handlers end the command with 130; the
 * kernel kills the child when this process ends (PR_SET_PDEATHSIG, set in nvrtc-child.ts), so no compile outlives
 * the command.
 */
export function compileInChild(script: string, request: Omit<CompileRequest, 'parent'>): Promise<NvrtcCompileOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error) =>
      reject(new DeviceFailure(`could not start the NVRTC compiler process (${script}): ${error.message}`)),
    );
    child.on('close', (code, signal) => {
      const text = Buffer.concat(out).toString('utf8');
      try {
        resolve(outcomeOf(JSON.parse(text) as CompileReply));
      } catch (error) {
        if (error instanceof DeviceFailure) return reject(error);
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        const said = Buffer.concat(err).toString('utf8').trim().split('\n').slice(-3).join(' | ');
        reject(new DeviceFailure(`the NVRTC compiler process ${how} without an answer${said ? `: ${said}` : ''}`));
      }
    });
    child.stdin.end(JSON.stringify({ ...request, parent: process.pid } satisfies CompileRequest));
  });
}

function outcomeOf(reply: CompileReply): NvrtcCompileOutcome {
  if ('error' in reply) throw new DeviceFailure(reply.error);
  if (!reply.ok) return reply;
  return { ok: true, cubin: new Uint8Array(Buffer.from(reply.cubin, 'base64')), ptx: reply.ptx, log: reply.log };
}
