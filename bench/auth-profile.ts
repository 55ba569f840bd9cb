// CPU profiles of GET /auth (node --cpu-prof): the built auth service and the cache service it
// reads, under the same keep-alive load as bench/auth.bench.ts, with a session written straight
// into the cache service (no Keycloak login: only the hot path runs). Prints the top frames and
// origins of each process and the CPU per request; the .cpuprofile files stay in the printed
// directory for a closer look (Chrome DevTools, speedscope).
//   node bench/auth-profile.ts [near-cache | near-cache-off | workers=N | near-cache-off,workers=N] [seconds]
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCacheClient } from '@sp/cache-client';
import { generateSelfSignedCertificate } from '@sp/auth';
import { summarizeProfile } from './lib/cpu-profile.ts';
import { load } from './lib/http-load.ts';
import { cpuMicros, freePort, infraEnv, startChild, stopChild, treeCpuMicros } from './lib/stats.ts';

const mode = process.argv[2] ?? 'near-cache';
const parts = mode.split(',');
const workers = parts.find((part) => part.startsWith('workers='));
/** PROFILE=0: the same run without the profiler (its sampling costs CPU too). */
const profiling = process.env.PROFILE !== '0';
const profile = (dir: string): string[] => (profiling ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []);
const seconds = Number(process.argv[3] ?? 8);
const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'auth-profile-'));
const infra = infraEnv();
const credentials = await generateSelfSignedCertificate();
writeFileSync(join(dir, 'tls.crt'), credentials.cert);
writeFileSync(join(dir, 'tls.key'), credentials.key, { mode: 0o600 });

const cachePort = await freePort();
const cacheManagementPort = await freePort();
/** The cache service's calls so far, by method (grpc_server_handling_seconds_count). */
const cacheCalls = async (): Promise<Record<string, number>> => {
  const text = await (await fetch(`http://127.0.0.1:${cacheManagementPort}/metrics`)).text();
  const calls: Record<string, number> = {};
  for (const match of text.matchAll(/^grpc_server_handling_seconds_count\{[^}]*method="(\w+)"[^}]*\} (\d+)/gm)) calls[match[1]!] = (calls[match[1]!] ?? 0) + Number(match[2]);
  return calls;
};
const cacheProfiles = join(dir, 'cache');
const cache = await startChild(process.execPath, [...profile(cacheProfiles), here('../services/cache/dist/main.js')], { Cache__Port: String(cachePort), Cache__Host: '127.0.0.1', Cache__Capacity: '100000', Management__Port: String(cacheManagementPort) }, /listening/);

const authPort = await freePort();
const authProfiles = join(dir, 'auth');
const env: Record<string, string> = {
  Auth__Port: String(authPort),
  Auth__Host: '127.0.0.1',
  Auth__PublicBaseUrl: `https://127.0.0.1:${authPort}`,
  Management__Port: String(await freePort()),
  Tls__CertPath: join(dir, 'tls.crt'),
  Tls__KeyPath: join(dir, 'tls.key'),
  Oidc__Realm: infra.KEYCLOAK_REALM!,
  Oidc__ServerUrl: infra.KEYCLOAK_URL!,
  Oidc__ClientId: 'platform-auth',
  Oidc__ClientSecret: 'unused',
  Oidc__AdminCredentials__Username: 'unused',
  Oidc__AdminCredentials__Password: 'unused',
  MessageBroker__BrokerList: infra.KAFKA_BROKERS!,
  Cache__Url: `127.0.0.1:${cachePort}`,
  NODE_ENV: 'Development',
  ...(parts.includes('near-cache-off') ? { Auth__SessionNearCacheEntries: '0' } : {}),
  ...(workers === undefined ? {} : { Auth__Workers: workers.slice('workers='.length) }),
};
const auth = await startChild(process.execPath, [...profile(authProfiles), '--enable-source-maps', '--import', here('../services/auth/dist/instrument.js'), here('../services/auth/dist/main.js')], env, /auth service listening/);

// A session as a login stores it, with an access token of the size Keycloak's are (~1.4 KB).
const client = createCacheClient<unknown>({ address: `127.0.0.1:${cachePort}` });
const tokenId = 'P'.repeat(43);
const now = Date.now();
const hour = 3_600_000;
await client.set(`token:${tokenId}`, { accessToken: `eyJ${'x'.repeat(1400)}`, refreshToken: 'r'.repeat(600), subject: 'profile', phoneNumber: '+4915100000000', expiresAtMs: now + hour, issuedAtMs: now, sessionEndsAtMs: now + hour, lastSeenAtMs: now, renewAtMs: now + hour / 2 }, hour);
client.close();

const request = { url: `https://127.0.0.1:${authPort}/auth`, headers: { cookie: `TokenId=${tokenId}` }, connections: 32 };
await load({ ...request, seconds: 2 });
const authCpu = treeCpuMicros(auth.pid!);
const primaryCpu = cpuMicros(auth.pid!);
const cacheCpu = cpuMicros(cache.pid!);
const callsBefore = await cacheCalls();
const figures = await load({ ...request, seconds });
const perRequest = (micros: number): string => (micros / figures.requests).toFixed(1);
process.stdout.write(`${mode}: ${figures.requestsPerSecond} req/s, p99 ${figures.p99Ms} ms; CPU µs/request auth ${perRequest(treeCpuMicros(auth.pid!) - authCpu)} (its first process ${perRequest(cpuMicros(auth.pid!) - primaryCpu)}), cache ${perRequest(cpuMicros(cache.pid!) - cacheCpu)}\n`);
const callsAfter = await cacheCalls();
const callsPerRequest = Object.entries(callsAfter).map(([method, count]) => `${method} ${((count - (callsBefore[method] ?? 0)) / figures.requests).toFixed(3)}`);
process.stdout.write(`cache calls per request: ${callsPerRequest.join(', ')}\n`);
await stopChild(auth);
await stopChild(cache);

for (const [name, profiles] of profiling ? ([['auth', authProfiles], ['cache', cacheProfiles]] as const) : []) {
  for (const file of readdirSync(profiles)) {
    const summary = summarizeProfile(JSON.parse(readFileSync(join(profiles, file), 'utf8')) as Parameters<typeof summarizeProfile>[0], 30, 3000);
    process.stdout.write(`\n== ${name} ${file} (${summary.samples} samples)\n`);
    for (const share of summary.byOrigin) process.stdout.write(`  ${share.percent.toFixed(1).padStart(5)}%  ${share.name}\n`);
    process.stdout.write('  --\n');
    for (const share of summary.topFrames) process.stdout.write(`  ${share.percent.toFixed(1).padStart(5)}%  ${share.name}\n`);
  }
}
process.stdout.write(`\nprofiles in ${dir}\n`);
