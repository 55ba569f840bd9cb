// make bench: the whole forward-auth path through nginx (issue 43). A client with a session asks
// nginx (Debian's, one worker) for a page of an application; nginx's `auth_request` asks the check,
// then passes the request on with the identity. Two setups, the same application process and
// certificate, in interleaved rounds:
// - nginx running docs/forward-auth/nginx.conf (its `test:` lines set) with the auth service as
//   deployed (identity headers on, the near cache on) and its session store, the cache service;
// - nginx running bench/lib/nginx-oauth2-proxy.conf, oauth2-proxy's documented nginx setup with the
//   same transport, with oauth2-proxy v7.15.6 (cookie session store, --reverse-proxy).
// Per round: requests/s, p50 and p99 of the authenticated page (autocannon, keep-alive), CPU per
// request of the check's process (the auth service plus the cache service; oauth2-proxy) and of the
// whole path (nginx + check + application). BENCH_ROUNDS (5), BENCH_SECONDS (8).
// Results: bench/results/nginx-forward-auth.json.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSelfSignedCertificate } from '@sp/auth';
import { runNginx, startNginx, type RunningProxy } from '../test/forward-auth/proxies.ts';
import { otpClient, startAuthService, type Bench } from './lib/auth-service.ts';
import { load, medianOf, type LoadFigures, roundsHeader } from './lib/http-load.ts';
import { createPasswordUser, deleteKeycloakUsers } from './lib/keycloak-users.ts';
import { oauth2ProxyBinary, startOAuth2Proxy, type RunningPeer } from './lib/oauth2-proxy-peer.ts';
import { cpuMicros, freePort, infraEnv, startChild, stopChild, treeCpuMicros, writeResults } from './lib/stats.ts';

const CONNECTIONS = 32;
const WARM_UP_SECONDS = 2;
const DURATION_SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** A page of the application with a query, as the forwarded-URL headers carry it. */
const PAGE = '/orders/7?tab=items';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/** Child side: the application behind nginx, answering every request with a small constant page. */
function runApplication(): void {
  const server = createServer((request, response) => {
    request.resume();
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('ok');
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write(`listening ${process.env.PORT}\n`));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

interface Setup {
  name: 'auth' | 'oauth2Proxy';
  url: string;
  /** The Cookie header of a live session, asked before each run. */
  cookie: () => Promise<string>;
  nginxPid: number;
  /** The check's processes: the auth service and its cache service, or oauth2-proxy. */
  checkPids: number[];
}

interface Figures extends LoadFigures {
  checkCpuMicrosPerRequest: number;
  nginxCpuMicrosPerRequest: number;
  applicationCpuMicrosPerRequest: number;
  /** nginx + the check + the application. */
  pathCpuMicrosPerRequest: number;
  loadAverage: number;
}

const perRequest = (micros: number, requests: number): number => Number((micros / requests).toFixed(1));

async function measure(setup: Setup, applicationPid: number): Promise<Figures> {
  const headers = { cookie: await setup.cookie(), accept: 'text/html' };
  await load({ url: setup.url, headers, seconds: WARM_UP_SECONDS, connections: CONNECTIONS });
  const check = (): number => setup.checkPids.reduce((sum, pid) => sum + treeCpuMicros(pid), 0);
  const before = { check: check(), nginx: treeCpuMicros(setup.nginxPid), application: cpuMicros(applicationPid) };
  const figures = await load({ url: setup.url, headers, seconds: DURATION_SECONDS, connections: CONNECTIONS });
  const used = { check: check() - before.check, nginx: treeCpuMicros(setup.nginxPid) - before.nginx, application: cpuMicros(applicationPid) - before.application };
  return {
    ...figures,
    checkCpuMicrosPerRequest: perRequest(used.check, figures.requests),
    nginxCpuMicrosPerRequest: perRequest(used.nginx, figures.requests),
    applicationCpuMicrosPerRequest: perRequest(used.application, figures.requests),
    pathCpuMicrosPerRequest: perRequest(used.check + used.nginx + used.application, figures.requests),
    loadAverage: Number(loadavg()[0]!.toFixed(1)),
  };
}

const round3 = (value: number): number => Number(value.toFixed(3));

function summarize(runs: Figures[]): Record<string, number> {
  const pick = (select: (run: Figures) => number, digits: number): number => Number(medianOf(runs.map(select)).toFixed(digits));
  return {
    requestsPerSecond: pick((run) => run.requestsPerSecond, 0),
    p50Ms: pick((run) => run.p50Ms, 2),
    p99Ms: pick((run) => run.p99Ms, 2),
    checkCpuMicrosPerRequest: pick((run) => run.checkCpuMicrosPerRequest, 1),
    nginxCpuMicrosPerRequest: pick((run) => run.nginxCpuMicrosPerRequest, 1),
    applicationCpuMicrosPerRequest: pick((run) => run.applicationCpuMicrosPerRequest, 1),
    pathCpuMicrosPerRequest: pick((run) => run.pathCpuMicrosPerRequest, 1),
  };
}

async function main(): Promise<void> {
  // Debian's nginx, as the forward-auth tests install it (`make up` does not; milliseconds when it is there).
  execFileSync('bash', [here('../test/infra/proxies.sh'), 'install', 'nginx'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const infra = infraEnv();
  const dir = mkdtempSync(join(tmpdir(), 'nginx-forward-auth-bench-'));
  const credentials = await generateSelfSignedCertificate();
  const bench: Bench = { certPath: join(dir, 'tls.crt'), keyPath: join(dir, 'tls.key'), cachePort: await freePort(), infra, client: { clientId: '', secret: '' } };
  writeFileSync(bench.certPath, credentials.cert);
  writeFileSync(bench.keyPath, credentials.key, { mode: 0o600 });
  const realm = JSON.parse(readFileSync(here('../test/infra/keycloak/realm.json'), 'utf8')) as { clients: Array<{ clientId: string; secret?: string }> };
  const client = (id: string): { clientId: string; secret: string } => {
    const found = realm.clients.find((candidate) => candidate.clientId === id)!;
    return { clientId: found.clientId, secret: found.secret! };
  };
  bench.client = client('platform-auth');

  const children: ChildProcess[] = [];
  const proxies: RunningProxy[] = [];
  const usersToDelete: string[] = [];
  let peer: RunningPeer | undefined;
  let otp: ReturnType<typeof otpClient> | undefined;
  try {
    const appPort = await freePort();
    const application = await startChild(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--application'], { PORT: String(appPort) }, /listening/);
    children.push(application);
    const cache = await startChild(process.execPath, [here('../services/cache/dist/main.js')], { Cache__Port: String(bench.cachePort), Cache__Host: '127.0.0.1', Cache__Capacity: '100000', Management__Port: String(await freePort()) }, /listening/);
    children.push(cache);

    // nginx + the auth service, as docs/forward-auth.md sets them up (the service under /sso/).
    const authNginxPort = await freePort();
    const site = `https://127.0.0.1:${authNginxPort}`;
    const auth = await startAuthService(bench, { Auth__PublicBaseUrl: `${site}/sso`, Auth__AllowedRedirectUris: site });
    children.push(auth.child);
    const authPort = Number(new URL(auth.url).port);
    proxies.push(await startNginx({ port: authNginxPort, authPorts: [authPort], upstreamPort: appPort, cert: credentials.cert, key: credentials.key }));
    otp = otpClient(auth.url, credentials.cert);
    const runId = Math.floor(Math.random() * 9_000_000);
    const phone = `+49151${String(10_000_000 + runId)}`;
    usersToDelete.push(phone);
    const tokenCookie = await otp.verify(phone, await otp.issue(phone, 0));

    // nginx + oauth2-proxy (cookie store), as oauth2-proxy documents it for nginx.
    const user = { username: `bench-nginx-oauth2-proxy-${runId}`, password: `Bench-${runId}-${Date.now()}`, email: `bench-nginx-oauth2-proxy-${runId}@example.test` };
    await createPasswordUser(infra, user);
    usersToDelete.push(user.username);
    peer = await startOAuth2Proxy({
      binary: oauth2ProxyBinary(),
      sessionStore: 'cookie',
      keycloak: { url: infra.KEYCLOAK_URL!, realm: infra.KEYCLOAK_REALM!, client: client('platform-web') },
      certPath: bench.certPath,
      keyPath: bench.keyPath,
      ca: credentials.cert,
      user,
      redisServerBin: infra.REDIS_SERVER_BIN ?? 'redis-server',
      extraArgs: ['--reverse-proxy=true'],
    });
    const peerNginxPort = await freePort();
    const template = readFileSync(here('./lib/nginx-oauth2-proxy.conf'), 'utf8');
    proxies.push(
      await runNginx('nginx-oauth2-proxy', { port: peerNginxPort, cert: credentials.cert, key: credentials.key }, ({ certFile, keyFile }) =>
        template
          .replaceAll('@OAUTH2_PROXY_PORT@', new URL(peer!.url).port)
          .replaceAll('@APP_PORT@', String(appPort))
          .replaceAll('@PORT@', String(peerNginxPort))
          .replaceAll('@CERT@', certFile)
          .replaceAll('@KEY@', keyFile),
      ),
    );

    const setups: Setup[] = [
      { name: 'auth', url: `${proxies[0]!.baseUrl}${PAGE}`, cookie: () => Promise.resolve(tokenCookie), nginxPid: proxies[0]!.process.pid!, checkPids: [auth.child.pid!, cache.pid!] },
      { name: 'oauth2Proxy', url: `${proxies[1]!.baseUrl}${PAGE}`, cookie: peer.liveCookie, nginxPid: proxies[1]!.process.pid!, checkPids: [peer.pid] },
    ];
    const runs: Record<Setup['name'], Figures[]> = { auth: [], oauth2Proxy: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const setup of round % 2 === 0 ? setups : [...setups].reverse()) {
        const figures = await measure(setup, application.pid!);
        runs[setup.name].push(figures);
        process.stdout.write(
          `round ${round + 1} nginx + ${setup.name}: ${figures.requestsPerSecond} req/s, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms; CPU µs/request: check ${figures.checkCpuMicrosPerRequest}, nginx ${figures.nginxCpuMicrosPerRequest}, application ${figures.applicationCpuMicrosPerRequest}, path ${figures.pathCpuMicrosPerRequest} (load average ${figures.loadAverage})\n`,
        );
      }
    }
    const perRound = (value: (ours: Figures, theirs: Figures) => number): number => round3(medianOf(runs.auth.map((run, i) => value(run, runs.oauth2Proxy[i]!))));
    const header = roundsHeader('authenticated requests through nginx auth_request: nginx + the auth service vs nginx + oauth2-proxy (cookie store)', { connections: CONNECTIONS, warmUpSeconds: WARM_UP_SECONDS, durationSeconds: DURATION_SECONDS, rounds: ROUNDS });
    const results = {
      ...header,
      setup: {
        ...header.setup,
        request: `GET ${PAGE} with the session cookie, keep-alive HTTPS to nginx (one worker); nginx to the check over verified TLS with keep-alive, to the application over HTTP with keep-alive`,
        auth: 'docs/forward-auth/nginx.conf; the auth service as deployed (near cache on, identity headers Authorization + X-Auth-Request-User/-Phone/-Groups/-Role), the cache service (memory backend) as its session store',
        oauth2Proxy: 'bench/lib/nginx-oauth2-proxy.conf; oauth2-proxy v7.15.6, cookie session store, --reverse-proxy --set-xauthrequest --pass-access-token, the same Keycloak realm',
        cpu: 'user + system CPU over the round / requests: check = the auth service + the cache service, or oauth2-proxy; path = nginx (master + worker) + check + application',
      },
      auth: { ...summarize(runs.auth), runs: runs.auth },
      oauth2Proxy: { ...summarize(runs.oauth2Proxy), runs: runs.oauth2Proxy },
      ratios: {
        note: 'medians of per-round ratios; requestsPerSecond ours/theirs (higher is better); cpu theirs/ours (higher is better); p99 ours/theirs (lower is better, under 1 ms counted as 1 ms)',
        requestsPerSecond: perRound((ours, theirs) => ours.requestsPerSecond / theirs.requestsPerSecond),
        checkCpuPerRequest: perRound((ours, theirs) => theirs.checkCpuMicrosPerRequest / ours.checkCpuMicrosPerRequest),
        pathCpuPerRequest: perRound((ours, theirs) => theirs.pathCpuMicrosPerRequest / ours.pathCpuMicrosPerRequest),
        p50: perRound((ours, theirs) => ours.p50Ms / Math.max(theirs.p50Ms, 1)),
        p99: perRound((ours, theirs) => ours.p99Ms / Math.max(theirs.p99Ms, 1)),
      },
    };
    writeResults('nginx-forward-auth', results);
    const { ratios } = results;
    process.stdout.write(
      `nginx + auth vs nginx + oauth2-proxy: requests/s ${ratios.requestsPerSecond}×, check CPU per request ${ratios.checkCpuPerRequest}× less, whole path ${ratios.pathCpuPerRequest}× less, p99 ${ratios.p99}× (load average ${loadavg()[0]!.toFixed(1)})\n`,
    );
  } finally {
    await otp?.close();
    for (const proxy of proxies) await proxy.stop();
    await peer?.close();
    await deleteKeycloakUsers(infra, usersToDelete).catch((err: unknown) => process.stderr.write(`cleaning up Keycloak users failed: ${String(err)}\n`));
    for (const child of children.reverse()) await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--application') runApplication();
else await main();
