// A private etcd + kube-apiserver for a benchmark, so what it writes (and etcd's growth) is its
// own and the shared test apiserver is left alone: etcd from test/infra/kube.sh's build, the
// apiserver through `kube.sh run-apiserver` (the shared service-account keys and admin token).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, infraEnv } from './stats.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface PrivateKube {
  url: string;
  /** A kubeconfig file of the admin (system:masters). */
  kubeconfig: string;
  token: string;
  etcdPid: number;
  /** The running apiserver's (it changes with restartApiserver). */
  apiserverPid: number;
  /** SIGKILLs the apiserver (a SIGTERM'd one drains watches for 60 s); etcd keeps running. */
  killApiserver(): void;
  /** Starts the apiserver again (same port, certificates and etcd); resolves when /readyz answers 200, with that moment (performance.now()). */
  startApiserver(): Promise<number>;
  /** etcd's database file as etcd reports it (`etcd_mvcc_db_total_size_in_bytes`). */
  etcdDbBytes(): Promise<number>;
  close(): void;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} not ready within ${timeoutMs} ms`);
}

export async function startPrivateKube(): Promise<PrivateKube> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-kube-'));
  const [client, peer, port] = [await freePort(), await freePort(), await freePort()];
  const etcdUrl = `http://127.0.0.1:${client}`;
  const env = infraEnv();
  const children: ChildProcess[] = [];
  const etcd = spawn(env.ETCD_BIN ?? join(ROOT, '.cache/bin/etcd'), [
    '--name', 'bench', '--data-dir', join(dir, 'etcd'),
    '--listen-client-urls', etcdUrl, '--advertise-client-urls', etcdUrl,
    '--listen-peer-urls', `http://127.0.0.1:${peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
    '--initial-cluster', `bench=http://127.0.0.1:${peer}`, '--log-level', 'warn', '--unsafe-no-fsync',
  ], { stdio: 'ignore' });
  children.push(etcd);
  const close = (): void => {
    for (const child of children) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor('etcd', async () => (await fetch(`${etcdUrl}/health`)).ok, 30_000);
    const url = `https://127.0.0.1:${port}`;
    // The admin token of kube.sh's shared state (made by run-apiserver when absent). The apiserver's
    // serving certificate is its own self-signed one: curl -k for readiness only.
    const token = (): string => readFileSync(join(ROOT, '.cache/run/kube/tokens.csv'), 'utf8').split(',')[0]!;
    // run-apiserver execs kube-apiserver: the child's pid is the apiserver's.
    let apiserver: ChildProcess | undefined;
    const launch = async (): Promise<number> => {
      apiserver = spawn('bash', [join(ROOT, 'test/infra/kube.sh'), 'run-apiserver', join(dir, 'apiserver'), String(port), etcdUrl], { stdio: 'ignore' });
      children.push(apiserver);
      await waitFor('kube-apiserver', async () => readyz(url, token()), 90_000);
      return performance.now();
    };
    await launch();
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'bench', cluster: { server: url, 'certificate-authority': join(dir, 'apiserver/certs/apiserver.crt') } }],
        users: [{ name: 'admin', user: { token: token() } }],
        contexts: [{ name: 'bench', context: { cluster: 'bench', user: 'admin' } }],
        'current-context': 'bench',
      }),
      { mode: 0o600 },
    );
    return {
      url,
      kubeconfig,
      token: token(),
      etcdPid: etcd.pid!,
      get apiserverPid() {
        return apiserver!.pid!;
      },
      killApiserver() {
        apiserver?.kill('SIGKILL');
      },
      startApiserver: launch,
      async etcdDbBytes() {
        const text = await (await fetch(`${etcdUrl}/metrics`)).text();
        return Number(/^etcd_mvcc_db_total_size_in_bytes (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
      },
      close,
    };
  } catch (err) {
    close();
    throw err;
  }
}

function readyz(url: string, token: string): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('curl', ['-fsS', '-k', '-o', '/dev/null', '--max-time', '2', '-H', `Authorization: Bearer ${token}`, `${url}/readyz`], { stdio: 'ignore' });
    child.on('exit', (code) => resolve(code === 0));
  });
}
