import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * A one-node Slurm cluster of our own (munged, slurmctld, slurmd in the foreground as our children), with its
 * config, state, sockets and logs under a temporary folder and ports of its own, so that it meets no Slurm the
 * machine may already run. Every wait is bounded; `stop` ends exactly the processes `start` spawned.
 */
export interface SlurmCluster {
  readonly dir: string;
  /** The environment srun needs: our slurm.conf, and no SLURM_* variables inherited from an outer job. */
  readonly env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

const DAEMONS = ['/usr/sbin/munged', '/usr/sbin/slurmctld', '/usr/sbin/slurmd'];

/** Why this machine cannot run the cluster, or null when it can try. */
export function slurmSkipReason(): string | null {
  if (process.platform !== 'linux') return 'Slurm runs on Linux only';
  if (process.getuid?.() !== 0) return 'starting slurmd and munged needs root';
  const missing = DAEMONS.filter((d) => !existsSync(d));
  if (missing.length) return `not installed: ${missing.join(', ')} (apt-get install slurm-wlm munge)`;
  for (const client of ['srun', 'sinfo']) {
    // Without a slurm.conf `--version` fails too; only a missing program counts here.
    if (spawnSync(client, ['--version'], { timeout: 5000, stdio: 'ignore' }).error)
      return `${client} is not on the PATH`;
  }
  return null;
}

function shortHostname(): string {
  const out = spawnSync('hostname', ['-s'], { encoding: 'utf8', timeout: 5000 });
  return (out.status === 0 ? out.stdout.trim() : '') || hostname().split('.')[0] || 'localhost';
}

/** Starts the cluster and waits (at most `timeoutMs`) for its node to be idle; throws with the logs' tails if not. */
export async function startSlurm(timeoutMs = 10_000): Promise<SlurmCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-slurm-'));
  const host = shortHostname();
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  for (const sub of ['state', 'spool']) mkdirSync(join(dir, sub));
  writeFileSync(join(dir, 'munge.key'), randomBytes(1024));
  chmodSync(join(dir, 'munge.key'), 0o600);
  const conf = join(dir, 'slurm.conf');
  // NodeAddr and the controller's address are 127.0.0.1, so that a host name that does not resolve costs nothing.
  // config_overrides: slurmd takes CPUs=2 as given rather than draining the node on a machine with another count.
  writeFileSync(
    conf,
    `ClusterName=cudapipe
SlurmctldHost=${host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=${dir}/munge.sock
CredType=cred/munge
SlurmctldPort=${port}
SlurmdPort=${port + 1}
StateSaveLocation=${dir}/state
SlurmdSpoolDir=${dir}/spool
SlurmctldPidFile=${dir}/slurmctld.pid
SlurmdPidFile=${dir}/slurmd.pid
SlurmctldLogFile=${dir}/slurmctld.log
SlurmdLogFile=${dir}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=${host} NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=${host} Default=YES MaxTime=5 State=UP
`,
  );
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('SLURM_') && !k.startsWith('OMPI_') && !k.startsWith('PMI_'),
    ),
  );
  env.SLURM_CONF = conf;
  const children: ChildProcess[] = [];
  const run = (path: string, args: string[]) => {
    const child = spawn(path, args, { env, stdio: 'ignore' });
    child.on('error', () => undefined);
    children.push(child);
  };
  const cluster: SlurmCluster = { dir, env, stop: () => stopAll(children, dir) };
  run('/usr/sbin/munged', [
    '-F',
    '-f',
    `--key-file=${dir}/munge.key`,
    `--socket=${dir}/munge.sock`,
    `--pid-file=${dir}/munged.pid`,
    `--log-file=${dir}/munged.log`,
    `--seed-file=${dir}/munged.seed`,
  ]);
  try {
    await until(() => existsSync(join(dir, 'munge.sock')), Date.now() + timeoutMs, 'munged made no socket');
    run('/usr/sbin/slurmctld', ['-D', '-c', '-f', conf]);
    run('/usr/sbin/slurmd', ['-D', '-f', conf]);
    await until(
      () => {
        const state = spawnSync('sinfo', ['-h', '-o', '%T'], { env, encoding: 'utf8', timeout: 3000 });
        return state.status === 0 && state.stdout.trim() === 'idle';
      },
      Date.now() + timeoutMs,
      'the node did not become idle',
    );
  } catch (error) {
    const logs = ['munged.log', 'slurmctld.log', 'slurmd.log'].map((f) => `${f}: ${tail(join(dir, f))}`).join('; ');
    await cluster.stop();
    throw new Error(`${(error as Error).message} within ${timeoutMs} ms (${logs})`);
  }
  return cluster;
}

async function until(ready: () => boolean, deadline: number, what: string): Promise<void> {
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(what);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function tail(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim().split('\n').slice(-3).join(' | ');
  } catch {
    return 'no log';
  }
}

/** SIGTERM to each daemon we spawned, SIGKILL to any still there after 3 s; then the folder goes. */
async function stopAll(children: readonly ChildProcess[], dir: string): Promise<void> {
  const alive = children.filter((c) => c.exitCode === null && c.signalCode === null && c.pid !== undefined);
  const exited = alive.map((c) => new Promise<void>((resolve) => c.once('exit', () => resolve())));
  for (const child of [...alive].reverse()) child.kill('SIGTERM');
  const timer = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 3000).unref());
  if ((await Promise.race([Promise.all(exited).then(() => 'done' as const), timer])) === 'late') {
    for (const child of alive) if (child.exitCode === null) child.kill('SIGKILL');
  }
  rmSync(dir, { recursive: true, force: true });
}
