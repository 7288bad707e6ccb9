// The NVRTC compiler process (nvrtc-process.ts starts it): one compile request on stdin, its reply on stdout. NVRTC's
// front end installs signal handlers of its own while it parses; here they can only end this child.
import koffi from 'koffi';
import { Nvrtc } from './nvrtc.js';
import type { CompileReply, CompileRequest } from './nvrtc-process.js';

const PR_SET_PDEATHSIG = 1;
const SIGKILL = 9;

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as CompileRequest;
// Die with the parent: it leaves through _exit on a signal, without waiting for a compile it no longer wants.
const prctl = koffi
  .load('libc.so.6')
  .func('int prctl(int option, unsigned long arg2, unsigned long arg3, unsigned long arg4, unsigned long arg5)');
prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
if (process.ppid !== request.parent) process.exit(1);
let reply: CompileReply;
try {
  const outcome = await new Nvrtc(request.library, koffi.load(request.library)).compileHere(
    request.source,
    request.name,
    request.options,
  );
  reply = outcome.ok
    ? { ok: true, cubin: Buffer.from(outcome.cubin).toString('base64'), ptx: outcome.ptx, log: outcome.log }
    : outcome;
} catch (error) {
  reply = { error: error instanceof Error ? error.message : String(error) };
}
process.stdout.write(JSON.stringify(reply));
