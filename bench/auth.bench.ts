// make bench: the auth service's hot path, `GET /auth` with a valid TokenId cookie, against its
// ceiling on this machine: a bare Koa HTTPS server answering a constant, with the same certificate
// and TLS settings, in the same process model (each server its own child process). The auth service
// is the built code (`services/auth/dist/main.js`, started as `npm start` does) on the real
// dependencies: the cache service (built, memory backend, its own child process), the shared Kafka
// and Keycloak. Two more targets explain the gap: the auth service without its local session cache
// (one gRPC read of the cache service per request) and the bare server answering the same ~1.4 KB
// Authorization header. Load: autocannon in a child process, keep-alive connections; interleaved
// rounds, the median decides.
// The peer, in the same interleaved rounds: oauth2-proxy (bench/lib/oauth2-proxy-peer.ts) on the
// same Keycloak realm, `/oauth2/auth` with a cookie session store and with a Redis one; ratios of
// requests/s, p99 and CPU per request (session store included on both sides: the cache service for
// the auth service, a private Redis for oauth2-proxy).
// Also: end-to-end throughput of POST /otp (cache + Kafka) and POST /otp/verify (cache + Keycloak
// admin API + the verified phone direct grant + Kafka), for new and for returning users.
// BENCH_AUTH_PARTS (default `forward-auth,otp`) picks the parts; BENCH_PEERS=0 leaves oauth2-proxy out.
// BENCH_KEYCLOAK_URL and BENCH_KEYCLOAK_PID point the run at another Keycloak of the same realm
// (`test/infra/keycloak.sh start-private`) instead of the shared one, e.g. to compare its settings.
// Results: bench/results/auth.json.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Koa from 'koa';
import { generateSelfSignedCertificate } from '@sp/auth';
import { requestListener } from '@sp/http';
import { otpClient, startAuthService, type Bench } from './lib/auth-service.ts';
import { load, medianOf, type LoadFigures, roundsHeader } from './lib/http-load.ts';
import { createPasswordUser, deleteKeycloakUsers, passwordRounds } from './lib/keycloak-users.ts';
import { oauth2ProxyBinary, startOAuth2Proxy, type RunningPeer } from './lib/oauth2-proxy-peer.ts';
import { cpuMicros, drive, freePort, infraEnv, infraPid, percentile, treeCpuMicros, startChild, stopChild, writeResults, type RunFigures } from './lib/stats.ts';

const CONNECTIONS = 32;
const WARM_UP_SECONDS = 2;
const DURATION_SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const OTP_CONCURRENCY = 8;
const OTP_ISSUE_MS = 5000;
const VERIFY_USERS = Number(process.env.BENCH_VERIFY_USERS ?? 200);
const VERIFY_CONCURRENCY = Number(process.env.BENCH_VERIFY_CONCURRENCY ?? 4);
const PARTS = new Set((process.env.BENCH_AUTH_PARTS ?? 'forward-auth,otp').split(','));
const WITH_PEERS = process.env.BENCH_PEERS !== '0';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));
const cacheMain = here('../services/cache/dist/main.js');

interface Figures extends LoadFigures {
  /** CPU time (user + system) per request of the server process, and of its session store (the cache service for the auth service, Redis for oauth2-proxy's Redis store). */
  serverCpuMicrosPerRequest?: number;
  storeCpuMicrosPerRequest?: number;
  /** The machine's 1-minute load average at the end of the run (the others' work on the shared cores). */
  loadAverage?: number;
}

/**
 * Child side: the ceiling, a bare Koa app over HTTPS with the auth service's certificate and TLS
 * floor; with `--node`, no Koa at all: node:https answering the header itself.
 */
function runBare(plainNode: boolean): void {
  const app = new Koa();
  const bearer = process.env.BEARER;
  app.use((ctx) => {
    if (bearer !== undefined) ctx.set('Authorization', bearer);
    ctx.body = bearer === undefined ? 'ok' : '';
  });
  const answer = (_request: unknown, response: ServerResponse): void => {
    if (bearer !== undefined) response.setHeader('Authorization', bearer);
    response.end();
  };
  const server = createServer({ cert: readFileSync(process.env.CERT_PATH!), key: readFileSync(process.env.KEY_PATH!), minVersion: 'TLSv1.2' }, plainNode ? answer : requestListener(app));
  server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write(`listening ${process.env.PORT}\n`));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

const round3 = (value: number): number => Number(value.toFixed(3));

function summarize(runs: Figures[]): Omit<Figures, 'non2xx' | 'errors' | 'requests'> {
  const pick = (select: (run: Figures) => number, digits: number): number => Number(medianOf(runs.map(select)).toFixed(digits));
  const summary: Omit<Figures, 'non2xx' | 'errors' | 'requests'> = {
    requestsPerSecond: pick((run) => run.requestsPerSecond, 0),
    p50Ms: pick((run) => run.p50Ms, 2),
    p99Ms: pick((run) => run.p99Ms, 2),
    serverCpuMicrosPerRequest: pick((run) => run.serverCpuMicrosPerRequest ?? 0, 1),
  };
  if (runs[0]?.storeCpuMicrosPerRequest !== undefined) summary.storeCpuMicrosPerRequest = pick((run) => run.storeCpuMicrosPerRequest!, 1);
  return summary;
}

type TargetName = 'auth' | 'authWithoutLocalCache' | 'authWithoutLocalCacheWorkers' | 'authWorkers' | 'bare' | 'bareWithToken' | 'bareNodeWithToken' | 'oauth2ProxyCookie' | 'oauth2ProxyRedis';

interface Target {
  name: TargetName;
  url: string;
  headers: Record<string, string>;
  pid: number;
  /** The session store's process, whose CPU counts too. */
  storePid?: number;
  /** The Cookie header of a live session, asked before each run (oauth2-proxy's Redis store can drop one). */
  liveCookie?: () => Promise<string>;
}

/** Warm-up, then one measured run with the CPU the server (and the auth service's cache service) spent per request. */
async function measure(target: Target): Promise<Figures> {
  if (target.liveCookie !== undefined) target.headers = { cookie: await target.liveCookie() };
  await load({ url: target.url, headers: target.headers, seconds: WARM_UP_SECONDS, connections: CONNECTIONS });
  const cpu = treeCpuMicros(target.pid);
  const storeCpu = target.storePid === undefined ? 0 : cpuMicros(target.storePid);
  const figures: Figures = await load({ url: target.url, headers: target.headers, seconds: DURATION_SECONDS, connections: CONNECTIONS });
  figures.serverCpuMicrosPerRequest = Number(((treeCpuMicros(target.pid) - cpu) / figures.requests).toFixed(1));
  if (target.storePid !== undefined) figures.storeCpuMicrosPerRequest = Number(((cpuMicros(target.storePid) - storeCpu) / figures.requests).toFixed(1));
  figures.loadAverage = Number(loadavg()[0]!.toFixed(1));
  return figures;
}

/** A fixed number of operations, `concurrency` at a time: throughput and latency of the whole batch. */
async function runBatch(count: number, concurrency: number, operation: (i: number) => Promise<void>): Promise<RunFigures> {
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const t0 = performance.now();
      try {
        await operation(i);
        latencies.push(performance.now() - t0);
      } catch (err) {
        errors++;
        if (errors === 1) process.stderr.write(`first error: ${(err as Error).message}\n`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  const seconds = (performance.now() - started) / 1000;
  const sorted = Float64Array.from(latencies).sort();
  return { opsPerSecond: Number((latencies.length / seconds).toFixed(1)), p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), calls: latencies.length, errors };
}

/**
 * The auth service without identity headers: the baselines answer the Authorization header alone
 * (and the recorded figures were taken before the identity headers of issue 43), so the same
 * answer here keeps them comparable. bench/nginx-forward-auth.bench.ts runs the default.
 */
const startAuth = (bench: Bench, env: Record<string, string> = {}) => startAuthService(bench, { Auth__IdentityHeaders: 'none', ...env });

async function startBare(bench: Bench, bearer?: string, plainNode = false): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const env: Record<string, string> = { PORT: String(port), CERT_PATH: bench.certPath, KEY_PATH: bench.keyPath, ...(bearer === undefined ? {} : { BEARER: bearer }) };
  const child = await startChild(process.execPath, [fileURLToPath(import.meta.url), '--bare', ...(plainNode ? ['--node'] : [])], env, /listening/);
  return { child, url: `https://127.0.0.1:${port}` };
}

type OtpClient = ReturnType<typeof otpClient>;

interface Session {
  cookie: string;
  bearer: string;
}

/** The two oauth2-proxy peers, each logged in as a fresh password user of the realm (removed afterwards). */
async function startPeers(bench: Bench, ca: string, runId: number, usersToDelete: string[]): Promise<RunningPeer[]> {
  const { infra } = bench;
  const user = { username: `bench-oauth2-proxy-${runId}`, password: `Bench-${runId}-${Date.now()}`, email: `bench-oauth2-proxy-${runId}@example.test` };
  await createPasswordUser(infra, user);
  usersToDelete.push(user.username);
  const realm = JSON.parse(readFileSync(here('../test/infra/keycloak/realm.json'), 'utf8')) as { clients: Array<{ clientId: string; secret?: string }> };
  const web = realm.clients.find((client) => client.clientId === 'platform-web')!;
  const options = {
    binary: oauth2ProxyBinary(),
    keycloak: { url: infra.KEYCLOAK_URL!, realm: infra.KEYCLOAK_REALM!, client: { clientId: web.clientId, secret: web.secret! } },
    certPath: bench.certPath,
    keyPath: bench.keyPath,
    ca,
    user,
    redisServerBin: infra.REDIS_SERVER_BIN ?? 'redis-server',
  };
  const cookieStore = await startOAuth2Proxy({ ...options, sessionStore: 'cookie' });
  try {
    return [cookieStore, await startOAuth2Proxy({ ...options, sessionStore: 'redis' })];
  } catch (err) {
    await cookieStore.close();
    throw err;
  }
}

/** GET /auth beside its ceilings and (unless BENCH_PEERS=0) oauth2-proxy, in interleaved rounds. */
async function forwardAuthRounds(bench: Bench, ctx: { authUrl: string; authPid: number; cachePid: number; session: Session; ca: string; runId: number; usersToDelete: string[]; children: ChildProcess[] }): Promise<Record<string, unknown>> {
  const { session } = ctx;
  const uncached = await startAuth(bench, { Auth__SessionNearCacheEntries: '0' });
  const bare = await startBare(bench);
  const bareWithToken = await startBare(bench, session.bearer);
  const bareNodeWithToken = await startBare(bench, session.bearer, true);
  const workers = await startAuth(bench, { Auth__Workers: '2' });
  const uncachedWorkers = await startAuth(bench, { Auth__SessionNearCacheEntries: '0', Auth__Workers: '2' });
  ctx.children.push(uncached.child, bare.child, bareWithToken.child, bareNodeWithToken.child, workers.child, uncachedWorkers.child);
  const headers = { cookie: session.cookie };
  const targets: Target[] = [
    { name: 'auth', url: `${ctx.authUrl}/auth`, headers, pid: ctx.authPid, storePid: ctx.cachePid },
    { name: 'bare', url: `${bare.url}/auth`, headers, pid: bare.child.pid! },
    { name: 'authWithoutLocalCache', url: `${uncached.url}/auth`, headers, pid: uncached.child.pid!, storePid: ctx.cachePid },
    { name: 'bareWithToken', url: `${bareWithToken.url}/auth`, headers, pid: bareWithToken.child.pid! },
    { name: 'bareNodeWithToken', url: `${bareNodeWithToken.url}/auth`, headers, pid: bareNodeWithToken.child.pid! },
    { name: 'authWorkers', url: `${workers.url}/auth`, headers, pid: workers.child.pid!, storePid: ctx.cachePid },
    { name: 'authWithoutLocalCacheWorkers', url: `${uncachedWorkers.url}/auth`, headers, pid: uncachedWorkers.child.pid!, storePid: ctx.cachePid },
  ];
  const peers = WITH_PEERS ? await startPeers(bench, ctx.ca, ctx.runId, ctx.usersToDelete) : [];
  try {
    const [cookiePeer, redisPeer] = peers;
    if (cookiePeer !== undefined) targets.push({ name: 'oauth2ProxyCookie', url: `${cookiePeer.url}/oauth2/auth`, headers: {}, pid: cookiePeer.pid, liveCookie: cookiePeer.liveCookie });
    if (redisPeer !== undefined) targets.push({ name: 'oauth2ProxyRedis', url: `${redisPeer.url}/oauth2/auth`, headers: {}, pid: redisPeer.pid, storePid: redisPeer.storePid!, liveCookie: redisPeer.liveCookie });
    const runs = Object.fromEntries(targets.map((target) => [target.name, [] as Figures[]])) as Record<TargetName, Figures[]>;
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
        const figures = await measure(target);
        runs[target.name].push(figures);
        process.stdout.write(`round ${round + 1} ${target.name}: ${figures.requestsPerSecond} req/s, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, ${figures.serverCpuMicrosPerRequest} µs server CPU/request${figures.storeCpuMicrosPerRequest === undefined ? '' : ` + ${figures.storeCpuMicrosPerRequest} µs session store`} (load average ${figures.loadAverage})\n`);
      }
    }
    return forwardAuthResults(runs);
  } finally {
    for (const peer of peers) await peer.close();
  }
}

/** Figures of the interleaved rounds: per target, ratios to the bare server and to oauth2-proxy. */
function forwardAuthResults(runs: Record<TargetName, Figures[]>): Record<string, unknown> {
  const perRound = (name: TargetName, other: TargetName, value: (mine: Figures, theirs: Figures) => number): number => round3(medianOf(runs[name].map((run, round) => value(run, runs[other][round]!))));
  const throughputRatio = (name: TargetName, other: TargetName): number => perRound(name, other, (mine, theirs) => mine.requestsPerSecond / theirs.requestsPerSecond);
  // Less sensitive to the other work on the machine: CPU per request, the session store's included.
  const cpuOf = (run: Figures): number => run.serverCpuMicrosPerRequest! + (run.storeCpuMicrosPerRequest ?? 0);
  const cpuRatio = (name: TargetName, other: TargetName): number => perRound(name, other, (mine, theirs) => cpuOf(theirs) / cpuOf(mine));
  const results: Record<string, unknown> = {
    forwardAuth: { ...summarize(runs.auth), runs: runs.auth },
    forwardAuthWithoutLocalCache: { ...summarize(runs.authWithoutLocalCache), runs: runs.authWithoutLocalCache },
    bare: { ...summarize(runs.bare), runs: runs.bare },
    bareWithToken: { ...summarize(runs.bareWithToken), runs: runs.bareWithToken },
    ratio: throughputRatio('auth', 'bare'),
    ratioByRound: runs.auth.map((run, round) => round3(run.requestsPerSecond / runs.bare[round]!.requestsPerSecond)),
    ratioByServerCpu: cpuRatio('auth', 'bare'),
    ratioWithoutLocalCache: throughputRatio('authWithoutLocalCache', 'bare'),
    ratioWithoutLocalCacheByServerCpu: cpuRatio('authWithoutLocalCache', 'bare'),
    ratioBareWithToken: throughputRatio('bareWithToken', 'bare'),
    target: 0.7,
    authWorkers: { ...summarize(runs.authWorkers), runs: runs.authWorkers },
    authWithoutLocalCacheWorkers: { ...summarize(runs.authWithoutLocalCacheWorkers), runs: runs.authWithoutLocalCacheWorkers },
    bareNodeWithToken: { ...summarize(runs.bareNodeWithToken), runs: runs.bareNodeWithToken },
    workersVersusBareNode: {
      note: 'Auth__Workers=2 (primary + 2 workers, CPU of all three and of the cache service) vs node:https answering the same Authorization header: CPU µs per request above it (median of rounds; target ≤ 25), the same above Koa HTTPS with the header, requests/s ratio',
      cpuMicrosAboveBareNode: Number(medianOf(runs.authWorkers.map((run, round) => cpuOf(run) - cpuOf(runs.bareNodeWithToken[round]!))).toFixed(1)),
      // Issue 29's "bare HTTPS server with the same header" (82.9 µs when it was filed) is bareWithToken, Koa over HTTPS.
      cpuMicrosAboveBareKoa: Number(medianOf(runs.authWorkers.map((run, round) => cpuOf(run) - cpuOf(runs.bareWithToken[round]!))).toFixed(1)),
      requestsPerSecond: throughputRatio('authWorkers', 'bareNodeWithToken'),
    },
  };
  if (runs.oauth2ProxyCookie !== undefined && runs.oauth2ProxyRedis !== undefined) {
    const versus = (name: TargetName, peer: TargetName) => ({
      requestsPerSecond: throughputRatio(name, peer),
      cpuPerRequest: cpuRatio(name, peer),
      p99: perRound(name, peer, (mine, theirs) => mine.p99Ms / Math.max(theirs.p99Ms, 1)),
    });
    results.oauth2ProxyCookie = { ...summarize(runs.oauth2ProxyCookie), runs: runs.oauth2ProxyCookie };
    results.oauth2ProxyRedis = { ...summarize(runs.oauth2ProxyRedis), runs: runs.oauth2ProxyRedis };
    results.versusOAuth2Proxy = {
      note: 'medians of per-round ratios; requestsPerSecond: ours / theirs (higher is better); cpuPerRequest: theirs / ours, session store included (higher is better); p99: ours / theirs (lower is better, p99 under 1 ms counted as 1 ms)',
      authVsCookieStore: versus('auth', 'oauth2ProxyCookie'),
      authVsRedisStore: versus('auth', 'oauth2ProxyRedis'),
      authWithoutLocalCacheVsRedisStore: versus('authWithoutLocalCache', 'oauth2ProxyRedis'),
      // A replica may use both cores, as oauth2-proxy's Go runtime does.
      authWithoutLocalCacheWorkersVsRedisStore: versus('authWithoutLocalCacheWorkers', 'oauth2ProxyRedis'),
      targets: { cookieStoreCpu: 2.0, cookieStoreRequestsPerSecond: 1.5, withoutLocalCacheVsRedisStoreRequestsPerSecond: 1.0 },
    };
  }
  return results;
}

const PASSWORD_ROUNDS = 20;

/** CPU per operation of each process a login goes through, while `run` makes `count` of them. */
async function cpuPerOperation<T extends { calls: number }>(pids: Record<string, number | undefined>, run: () => Promise<T>): Promise<T & { cpuMicrosPerOp: Record<string, number> }> {
  const live = Object.entries(pids).filter((entry): entry is [string, number] => entry[1] !== undefined);
  const before = live.map(([, pid]) => treeCpuMicros(pid));
  const figures = await run();
  const cpuMicrosPerOp = Object.fromEntries(live.map(([name, pid], i) => [name, Math.round((treeCpuMicros(pid) - before[i]!) / Math.max(1, figures.calls))]));
  return { ...figures, cpuMicrosPerOp };
}

/** POST /otp, then POST /otp/verify for new and for returning users (codes issued beforehand), with the CPU each process spent per login. */
async function otpRuns(bench: Bench, ctx: { otp: OtpClient; authPid: number; cachePid: number; phone: (i: number, base: number) => string; runId: number; usersToDelete: string[] }): Promise<Record<string, unknown>> {
  const { otp, phone } = ctx;
  // POST /otp end to end: validation, limits and code records in the cache service, Kafka publish (acks=all).
  const otpIssue = await drive((i) => otp.issue(phone(i, 20_000_000), i), OTP_CONCURRENCY, OTP_ISSUE_MS, ctx.authPid);
  process.stdout.write(`POST /otp: ${otpIssue.opsPerSecond}/s, p50 ${otpIssue.p50Ms} ms, p99 ${otpIssue.p99Ms} ms\n`);
  const phones = Array.from({ length: VERIFY_USERS }, (_, i) => phone(i, 30_000_000));
  ctx.usersToDelete.push(...phones);
  const pids = { auth: ctx.authPid, cache: ctx.cachePid, keycloak: keycloakPid(), kafka: infraPid('kafka') };
  const verifyRun = async () => {
    const codes = await Promise.all(phones.map((phoneNumber, i) => otp.issue(phoneNumber, 100_000 + i)));
    return cpuPerOperation(pids, () => runBatch(phones.length, VERIFY_CONCURRENCY, async (i) => void (await otp.verify(phones[i]!, codes[i]!))));
  };
  const verifyNewUsers = await verifyRun();
  const verifyReturningUsers = await verifyRun();
  const show = (run: RunFigures & { cpuMicrosPerOp: Record<string, number> }): string =>
    `${run.opsPerSecond}/s (p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms; CPU µs per login ${JSON.stringify(run.cpuMicrosPerOp)})`;
  process.stdout.write(`POST /otp/verify: new users ${show(verifyNewUsers)}, returning ${show(verifyReturningUsers)}\n`);
  // The round each login no longer makes, measured now for reference: reset-password + password grant.
  const reference = { username: `bench-password-round-${ctx.runId}`, password: `Bench-${ctx.runId}-${Date.now()}`, email: `bench-password-round-${ctx.runId}@example.test` };
  await createPasswordUser(bench.infra, reference);
  ctx.usersToDelete.push(reference.username);
  let msPerRound = 0;
  const passwordRound = await cpuPerOperation({ keycloak: pids.keycloak }, async () => {
    msPerRound = await passwordRounds(bench.infra, reference.username, PASSWORD_ROUNDS);
    return { calls: PASSWORD_ROUNDS };
  });
  process.stdout.write(`the former password round (reset + grant): ${msPerRound.toFixed(0)} ms, Keycloak CPU ${passwordRound.cpuMicrosPerOp.keycloak} µs per login\n`);
  const path = 'cache (code checks, lock), Keycloak admin API (user search, group membership), the verified phone direct grant (no password, nothing hashed), cache (session), Kafka (UserLoggedInEvent)';
  const cpuBound = (run: { cpuMicrosPerOp: Record<string, number> }): number => Math.round((cpus().length * 1e6) / Object.values(run.cpuMicrosPerOp).reduce((sum, value) => sum + value, 0));
  return {
    otpIssue: { ...otpIssue, concurrency: OTP_CONCURRENCY, note: 'end to end: phone validation, 3 limit reads + 3 writes and 7 code records in the cache service, SendSmsNotificationEvent with acks=all' },
    otpVerifyNewUsers: { ...verifyNewUsers, concurrency: VERIFY_CONCURRENCY, loginsPerSecondIfCpuBound: cpuBound(verifyNewUsers), note: `${path}; plus the user creation (without credentials)` },
    otpVerifyReturningUsers: { ...verifyReturningUsers, concurrency: VERIFY_CONCURRENCY, loginsPerSecondIfCpuBound: cpuBound(verifyReturningUsers), note: path, target: { opsPerSecond: 50, p99Ms: 250 } },
    formerPasswordRound: {
      msPerLogin: Number(msPerRound.toFixed(1)),
      keycloakCpuMicrosPerLogin: passwordRound.cpuMicrosPerOp.keycloak,
      note: 'what each OTP login added before this version, measured in the same run: reset-password through the admin API + a password grant (argon2 twice), one at a time',
    },
    cpuNote: 'CPU µs per login by process (auth service, cache service, Keycloak JVM, Kafka JVM; the shared JVMs also serve others, so theirs is an upper bound); loginsPerSecondIfCpuBound = cores × 1 s / their sum',
  };
}

const keycloakPid = (): number | undefined => (process.env.BENCH_KEYCLOAK_PID === undefined ? infraPid('keycloak') : Number(process.env.BENCH_KEYCLOAK_PID));

async function main(): Promise<void> {
  const infra = { ...infraEnv(), ...(process.env.BENCH_KEYCLOAK_URL === undefined ? {} : { KEYCLOAK_URL: process.env.BENCH_KEYCLOAK_URL }) };
  const dir = mkdtempSync(join(tmpdir(), 'auth-bench-'));
  const credentials = await generateSelfSignedCertificate();
  const bench: Bench = { certPath: join(dir, 'tls.crt'), keyPath: join(dir, 'tls.key'), cachePort: await freePort(), infra, client: { clientId: '', secret: '' } };
  writeFileSync(bench.certPath, credentials.cert);
  writeFileSync(bench.keyPath, credentials.key, { mode: 0o600 });
  const realm = JSON.parse(readFileSync(here('../test/infra/keycloak/realm.json'), 'utf8')) as { clients: Array<{ clientId: string; secret?: string }> };
  const authClient = realm.clients.find((client) => client.clientId === 'platform-auth')!;
  bench.client = { clientId: authClient.clientId, secret: authClient.secret! };

  const children: ChildProcess[] = [];
  const cache = await startChild(process.execPath, [cacheMain], { Cache__Port: String(bench.cachePort), Cache__Host: '127.0.0.1', Cache__Capacity: '100000', Management__Port: String(await freePort()) }, /listening/);
  children.push(cache);
  const auth = await startAuth(bench);
  children.push(auth.child);
  const otp = otpClient(auth.url, credentials.cert);
  // +49 151 and 8 digits: 1xxxxxxx for the session, 2… for /otp, 3… for /otp/verify, 7 random digits per run.
  const runId = Math.floor(Math.random() * 9_000_000);
  const phone = (i: number, base: number): string => `+49151${String(base + ((runId + i) % 10_000_000))}`;
  const usersToDelete: string[] = [];
  try {
    const header = roundsHeader('auth GET /auth with a valid TokenId cookie vs a bare Koa HTTPS server answering a constant and vs oauth2-proxy /oauth2/auth; OTP login throughput', { connections: CONNECTIONS, warmUpSeconds: WARM_UP_SECONDS, durationSeconds: DURATION_SECONDS, rounds: ROUNDS });
    const results: Record<string, unknown> = {
      ...header,
      setup: {
        ...header.setup,
        tls: 'same self-signed EC P-256 certificate, TLS 1.2+ (TLS 1.3 negotiated), keep-alive connections',
        processes: 'auth service, cache service (memory backend), bare servers, oauth2-proxy (+ its private Redis) and autocannon each in their own process on 2 shared cores; Kafka and Keycloak (JVMs) idle during the /auth runs',
        targets: {
          auth: 'the auth service as deployed (sessions read through the near cache: a session read once is answered from memory while the invalidation stream vouches for it)',
          authWithoutLocalCache: 'the same with Auth__SessionNearCacheEntries=0 (near cache off): one gRPC read of the cache service per request',
          bare: 'the ceiling: Koa over the same HTTPS answering a 2-byte constant',
          bareWithToken: 'the same answering the same Authorization header as /auth (the ~1.4 KB bearer token): what the contract itself costs',
          bareNodeWithToken: 'node:https without Koa answering the same Authorization header',
          authWorkers: 'the auth service with Auth__Workers=2 (node:cluster primary + 2 workers; CPU of the three processes and the cache service)',
          authWithoutLocalCacheWorkers: 'the auth service with the near cache off and Auth__Workers=2: a replica on both cores reading every session through',
          oauth2ProxyCookie: 'oauth2-proxy v7.15.6 /oauth2/auth (202 + X-Auth-Request-Access-Token), cookie session store, same realm (platform-web client), same certificate',
          oauth2ProxyRedis: 'the same with --session-store-type=redis on a private redis-server (its CPU counted as the session store)',
        },
      },
    };
    if (PARTS.has('forward-auth')) {
      // A session for the /auth runs: the cookie of one OTP login.
      const sessionPhone = phone(0, 10_000_000);
      usersToDelete.push(sessionPhone);
      const cookie = await otp.verify(sessionPhone, await otp.issue(sessionPhone, 0));
      const session = { cookie, bearer: await otp.bearerOf(cookie) };
      Object.assign(results, await forwardAuthRounds(bench, { authUrl: auth.url, authPid: auth.child.pid!, cachePid: cache.pid!, session, ca: credentials.cert, runId, usersToDelete, children }));
    }
    if (PARTS.has('otp')) Object.assign(results, await otpRuns(bench, { otp, authPid: auth.child.pid!, cachePid: cache.pid!, phone, runId, usersToDelete }));
    writeResults('auth', results);
    printRatios(results);
  } finally {
    await otp.close();
    await deleteKeycloakUsers(infra, usersToDelete).catch((err: unknown) => process.stderr.write(`cleaning up Keycloak users failed: ${String(err)}\n`));
    for (const child of children.reverse()) await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The worker and oauth2-proxy comparisons, one line each, after the JSON. */
function printRatios(results: Record<string, unknown>): void {
  const workers = results.workersVersusBareNode as { cpuMicrosAboveBareNode: number; cpuMicrosAboveBareKoa: number; requestsPerSecond: number } | undefined;
  if (workers !== undefined) {
    process.stdout.write(
      `Auth__Workers=2 vs bare node:https with the header: ${workers.cpuMicrosAboveBareNode} µs CPU per request above it, requests/s ratio ${workers.requestsPerSecond}; vs bare Koa HTTPS with the header: ${workers.cpuMicrosAboveBareKoa} µs above it\n`,
    );
  }
  const versus = results.versusOAuth2Proxy as Record<string, { requestsPerSecond: number; cpuPerRequest: number; p99: number }> | undefined;
  if (versus === undefined) return;
  for (const pair of ['authVsCookieStore', 'authVsRedisStore', 'authWithoutLocalCacheVsRedisStore', 'authWithoutLocalCacheWorkersVsRedisStore']) {
    const ratios = versus[pair]!;
    process.stdout.write(`${pair}: requests/s ours/theirs ${ratios.requestsPerSecond}, CPU per request theirs/ours ${ratios.cpuPerRequest}, p99 ours/theirs ${ratios.p99} (load average ${loadavg()[0]!.toFixed(1)})\n`);
  }
}

if (process.argv[2] === '--bare') runBare(process.argv[3] === '--node');
else await main();
