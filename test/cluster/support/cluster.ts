import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../deploy/support/service-config.js';
import { sleep } from '../../support/eventually.js';

const run = promisify(execFile);

export const clusterScript = join(repoRoot, 'test/infra/cluster.sh');
const bin = (name: string): string => join(repoRoot, '.cache/bin', name);

export interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** `test/infra/cluster.sh ARGS`, its exit code and output (never throws on a non-zero exit). */
export async function clusterSh(args: readonly string[], timeoutMs = 600_000): Promise<Outcome> {
  return infraSh(clusterScript, args, timeoutMs);
}

/** `bash SCRIPT ARGS` (a script of test/infra or scripts/) with `env` added, its exit code and output (never throws on a non-zero exit). */
export async function infraSh(script: string, args: readonly string[], timeoutMs = 600_000, env: Record<string, string> = {}): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run('bash', [script, ...args], { cwd: repoRoot, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** Held by the cluster suite that runs on this machine. */
const TIER_LOCK = '/run/lock/subscription-platform-cluster-tier.lock';
/** cluster.sh's lock (LOCK there): held by the processes of the cluster that runs; its owner file names the checkout. */
const CLUSTER_LOCK = '/run/lock/subscription-platform-cluster.lock';

/** The checkout and pid a lock's owner file names, or 'unknown'. */
function ownerOf(lock: string): string {
  try {
    return readFileSync(`${lock}.owner`, 'utf8').trim();
  } catch {
    return 'unknown';
  }
}

/** No cluster runs, or the one that runs is this checkout's (as cluster.sh's `ours` decides). */
async function clusterFreeForUs(): Promise<boolean> {
  const free = await run('flock', ['-n', CLUSTER_LOCK, 'true']).then(
    () => true,
    () => false,
  );
  return free || ownerOf(CLUSTER_LOCK).split(' (pid')[0] === repoRoot;
}

/**
 * Holds the machine's cluster tier for as long as a cluster suite runs, from its first snapshot of
 * the machine to its `down`: one single-node cluster fits a machine (cluster.sh refuses a second
 * `up`), so the cluster suite of a second checkout's `make test` waits here, up to `waitMs`, saying
 * for whom, instead of failing. `flock` holds the lock in a child whose stdin is this process: the
 * lock is freed when the suite calls the returned release, or when this process dies.
 */
export async function holdClusterTier(waitMs: number): Promise<() => Promise<void>> {
  mkdirSync('/run/lock', { recursive: true });
  const started = Date.now();
  const holder = spawn('flock', ['-w', String(Math.ceil(waitMs / 1000)), TIER_LOCK, '-c', 'echo held; exec cat > /dev/null'], { stdio: ['pipe', 'pipe', 'ignore'] });
  const exited = new Promise<number | null>((resolve) => holder.once('exit', (code) => resolve(code)));
  const waiting = setTimeout(() => console.log(`the cluster tier waits for the cluster suite of another checkout: ${ownerOf(TIER_LOCK)}`), 2000);
  const held = await new Promise<boolean>((resolve) => {
    holder.stdout.once('data', () => resolve(true));
    void exited.then(() => resolve(false));
  });
  clearTimeout(waiting);
  if (!held) throw new Error(`the cluster tier stayed busy for ${Math.round((Date.now() - started) / 1000)} s (${TIER_LOCK}.owner names the suite that holds it)`);
  writeFileSync(`${TIER_LOCK}.owner`, `${repoRoot} (pid ${process.pid})\n`);
  // A cluster brought up outside a suite (`make cluster-up` in another checkout) holds only
  // cluster.sh's own lock: wait for its `down` too, within the same bound.
  for (let said = false; !(await clusterFreeForUs()); said = true) {
    if (Date.now() - started > waitMs) {
      holder.stdin.end();
      throw new Error(`another checkout's cluster still runs after ${Math.round(waitMs / 1000)} s (${CLUSTER_LOCK}.owner names it)`);
    }
    if (!said) console.log(`the cluster tier waits for another checkout's cluster to go down: ${ownerOf(CLUSTER_LOCK)}`);
    await sleep(5000);
  }
  return async () => {
    holder.stdin.end();
    await exited;
  };
}

/** A container's securityContext as Pod Security `restricted` demands it (the suite's namespace enforces it). */
export const restrictedContainer = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  runAsNonRoot: true,
  runAsUser: 1000,
  seccompProfile: { type: 'RuntimeDefault' },
};

/** The machine state the cluster changes (cluster.sh snapshot), as lines. */
export async function machineState(): Promise<string[]> {
  const { code, stdout, stderr } = await clusterSh(['snapshot']);
  if (code !== 0) throw new Error(`cluster.sh snapshot failed: ${stderr}`);
  return stdout.trim().split('\n');
}

/** The name → archive/reference lines of .cache/images/images.env (test/infra/images.sh). */
export function imageReferences(): Record<string, string> {
  const text = readFileSync(join(repoRoot, '.cache/images/images.env'), 'utf8');
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

export interface PortForward {
  port: number;
  close(): Promise<void>;
}

export interface Kube {
  kubeconfig: string;
  kubectl(args: readonly string[], input?: string): Promise<string>;
  json<T>(args: readonly string[]): Promise<T>;
  /** `kubectl port-forward TARGET :PORT`, as docs/deployment.md tells users to debug; resolves once kubectl forwards. */
  portForward(namespace: string, target: string, port: number): Promise<PortForward>;
}

function waitForForwarding(child: ChildProcess, target: string): Promise<number> {
  let output = '';
  return new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`port-forward ${target}: no forwarding within 30 s: ${output}`)), 30_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`port-forward ${target} exited with ${code}: ${output}`));
    });
  });
}

export function kube(kubeconfig: string): Kube {
  const kubectl = async (args: readonly string[], input?: string): Promise<string> => {
    const child = run(bin('kubectl'), ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 64 * 1024 * 1024 });
    if (input !== undefined) child.child.stdin!.end(input);
    try {
      return (await child).stdout;
    } catch (error) {
      throw new Error(`kubectl ${args.join(' ')}: ${(error as { stderr?: string }).stderr ?? String(error)}`);
    }
  };
  return {
    kubeconfig,
    kubectl,
    json: async <T>(args: readonly string[]): Promise<T> => JSON.parse(await kubectl([...args, '-o', 'json'])) as T,
    portForward: async (namespace, target, port) => {
      const child = spawn(bin('kubectl'), ['--kubeconfig', kubeconfig, '-n', namespace, 'port-forward', '--address', '127.0.0.1', target, `:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
      const local = await waitForForwarding(child, target);
      return {
        port: local,
        close: async () => {
          if (child.exitCode !== null) return;
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGTERM');
          await exited;
        },
      };
    },
  };
}

/** grpcurl's answer to grpc.health.v1.Health/Check on a plaintext address. */
export async function grpcHealth(address: string, service = ''): Promise<string> {
  const { stdout } = await run(bin('grpcurl'), ['-plaintext', '-d', JSON.stringify({ service }), address, 'grpc.health.v1.Health/Check']);
  return (JSON.parse(stdout) as { status: string }).status;
}
