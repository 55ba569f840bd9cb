// oauth2-proxy as the forward-auth peer of the auth benchmark: built by bench/lib/oauth2-proxy.sh,
// run against the same Keycloak realm (the `platform-web` client: confidential, PKCE S256), with a
// cookie session store or a Redis one (a private redis-server, so its CPU is the peer's alone), and
// logged in once through Keycloak's real login form to get a session cookie for `/oauth2/auth`.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Agent, fetch } from 'undici';
import { CookieJar, signInWithKeycloakForm } from '../../test/support/keycloak-form-login.ts';
import { freePort, startChild, stopChild } from './stats.ts';

export interface KeycloakRealm {
  url: string;
  realm: string;
  client: { clientId: string; secret: string };
}

export interface RunningPeer {
  /** `https://127.0.0.1:<port>` */
  url: string;
  pid: number;
  /** The session store's process (the private Redis), when there is one. */
  storePid?: number;
  /**
   * The Cookie header of a live session: the last one, or a new login when `/oauth2/auth` refuses
   * it. With the Redis store, oauth2-proxy deletes a session whose load was cut short (a request
   * cancelled when the load generator closes its connections: "error loading redis session: context
   * canceled, removing session"), so a round can end the session the next one needs.
   */
  liveCookie: () => Promise<string>;
  close(): Promise<void>;
}

/** The pinned oauth2-proxy binary, built once (cached under .cache) by bench/lib/oauth2-proxy.sh. */
export function oauth2ProxyBinary(): string {
  const script = fileURLToPath(new URL('./oauth2-proxy.sh', import.meta.url));
  return execFileSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

async function startRedis(redisServerBin: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = await startChild(redisServerBin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {}, /Ready to accept connections/);
  return { child, url: `redis://127.0.0.1:${port}` };
}

/** Polls oauth2-proxy's /ping until it answers (it prints nothing when it starts listening). */
async function waitForPing(url: string, dispatcher: Agent, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null) throw new Error(`oauth2-proxy exited with ${child.exitCode}`);
    const ok = await fetch(`${url}/ping`, { dispatcher }).then(
      async (response) => (await response.text(), response.ok),
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('oauth2-proxy did not answer /ping within 30 s');
}

/** Logs in as a browser would: /oauth2/start, Keycloak's login form, /oauth2/callback. Returns the session's Cookie header. */
async function logIn(url: string, dispatcher: Agent, user: { username: string; password: string }): Promise<string> {
  const jar = new CookieJar();
  const start = await fetch(`${url}/oauth2/start?rd=%2F`, { redirect: 'manual', dispatcher });
  await start.text();
  jar.store(start);
  const back = await signInWithKeycloakForm(start.headers.get('location')!, user.username, user.password);
  const callback = await fetch(`${url}${back.pathname}${back.search}`, { redirect: 'manual', headers: { cookie: jar.header() }, dispatcher });
  await callback.text();
  if (callback.status !== 302) throw new Error(`oauth2-proxy's callback answered ${callback.status}`);
  const session = new CookieJar();
  session.store(callback);
  return session.header();
}

export interface PeerOptions {
  binary: string;
  sessionStore: 'cookie' | 'redis';
  keycloak: KeycloakRealm;
  certPath: string;
  keyPath: string;
  /** The certificate's PEM, to trust it. */
  ca: string;
  user: { username: string; password: string };
  redisServerBin: string;
  /** More command-line flags (e.g. `--reverse-proxy` behind nginx). */
  extraArgs?: readonly string[];
}

/**
 * oauth2-proxy answering `/oauth2/auth` with 202 and the user's access token in
 * `X-Auth-Request-Access-Token` (`--set-xauthrequest --pass-access-token`, the closest to the auth
 * service's `Authorization: Bearer`), over HTTPS with the auth service's certificate, request
 * logging off (the auth service logs no request either).
 */
export async function startOAuth2Proxy(options: PeerOptions): Promise<RunningPeer> {
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  const redis = options.sessionStore === 'redis' ? await startRedis(options.redisServerBin) : undefined;
  const { keycloak } = options;
  const args = [
    '--provider=oidc',
    `--oidc-issuer-url=${keycloak.url}/realms/${keycloak.realm}`,
    `--client-id=${keycloak.client.clientId}`,
    `--client-secret=${keycloak.client.secret}`,
    '--code-challenge-method=S256',
    `--cookie-secret=${randomBytes(24).toString('base64url')}`,
    '--cookie-secure=true',
    '--email-domain=*',
    `--http-address=127.0.0.1:${await freePort()}`,
    `--https-address=127.0.0.1:${port}`,
    `--tls-cert-file=${options.certPath}`,
    `--tls-key-file=${options.keyPath}`,
    `--redirect-url=${url}/oauth2/callback`,
    '--upstream=static://202',
    '--skip-provider-button=true',
    '--set-xauthrequest=true',
    '--pass-access-token=true',
    '--request-logging=false',
    '--auth-logging=false',
    ...(redis === undefined ? [] : ['--session-store-type=redis', `--redis-connection-url=${redis.url}`]),
    ...(options.extraArgs ?? []),
  ];
  // Its log goes to stderr: kept (the last 4 KB) for a failed start, not printed (a Redis-store run
  // logs every request cut short when the load generator closes its connections).
  const child = spawn(options.binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-4096);
  });
  const dispatcher = new Agent({ connect: { ca: options.ca } });
  const close = async (): Promise<void> => {
    await dispatcher.close();
    await stopChild(child);
    if (redis !== undefined) await stopChild(redis.child);
  };
  try {
    await waitForPing(url, dispatcher, child).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; its log: ${log}`);
    });
    let cookie = await logIn(url, dispatcher, options.user);
    const liveCookie = async (): Promise<string> => {
      const check = await fetch(`${url}/oauth2/auth`, { headers: { cookie }, dispatcher });
      await check.text();
      if (!check.ok) cookie = await logIn(url, dispatcher, options.user);
      return cookie;
    };
    return { url, pid: child.pid!, ...(redis === undefined ? {} : { storePid: redis.child.pid! }), liveCookie, close };
  } catch (err) {
    await close();
    throw err;
  }
}
