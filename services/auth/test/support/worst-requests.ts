// The authentication service's most expensive requests and the service to send them to, shared by
// test/worst-request.test.ts (what a user notices: every other caller answered, each request cheap
// in CPU) and make bench (bench/worst-request.bench.ts: the other caller's p99 against its target).
import { Agent, fetch, type Dispatcher } from 'undici';
import { buildService } from '../../../../test/deploy/support/build.js';
import { serviceEnv } from '../../../../test/deploy/support/service-env.js';
import { HTTPS_REQUEST, hostileWorker } from '../../../../test/support/hostile-worker.js';
import { npmStart, startService, type ServiceProcess } from '../../../../test/support/service-process.js';
import { cookieValue } from './cookies.js';
import { authClient, deleteUsersNamed } from './keycloak.js';
import { newPhoneNumber } from './phones.js';

/** A request as the hostile caller sends it, and the status it must get every time. */
export interface Hostile {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  status: number;
}

const KiB = 1024;
const json = { 'content-type': 'application/json' };

/**
 * The most expensive requests the authentication service accepts or refuses before any backend is
 * asked: the cookie header a browser could carry at Node's header limit, shaped as the parser's
 * worst case; the largest JSON body, nested as deep as it goes; a body over the limit; a phone
 * "number" of thousands of digits; a redirect URI of kilobytes.
 */
export const AUTH_WORST_REQUESTS: Array<[string, Hostile]> = [
  ['a 15 KiB Cookie header of pairs without "="', { method: 'GET', path: '/auth', headers: { cookie: `${'a;'.repeat(7.5 * KiB)}TokenId=x` }, status: 401 }],
  ['a 16 KiB JSON body nested 8,000 arrays deep', { method: 'POST', path: '/otp', headers: json, body: `{"phoneNumber":${'['.repeat(8000)}${']'.repeat(8000)}}`, status: 400 }],
  ['a 1 MiB body, over the 16 KiB limit', { method: 'POST', path: '/otp', headers: json, body: Buffer.alloc(1024 * KiB, 0x20), status: 413 }],
  ['a phone number of 15,000 digits', { method: 'POST', path: '/otp', headers: json, body: JSON.stringify({ phoneNumber: `+${'4'.repeat(15_000)}` }), status: 400 }],
  ['a redirect URI of 8 KiB', { method: 'GET', path: `/login?redirectUri=${encodeURIComponent(`https://app.example.test/${'a'.repeat(8 * KiB)}`)}`, status: 400 }],
];

/** The service under its worst requests, with a signed-in user's session for the other caller. */
export interface AuthUnderAttack {
  auth: ServiceProcess;
  /** Another caller: GET /auth with the session, on a keep-alive connection of its own; throws unless 200. */
  probe(): () => Promise<void>;
  /** A caller sending `hostile` again and again from a worker thread (off the probes' event loop). */
  attacker(hostile: Hostile): { request(): Promise<void>; close(): Promise<number> };
  close(): Promise<void>;
}

/**
 * Builds and starts the cache and auth services as their containers run them (processes of their
 * own) against the real Kafka and Keycloak, and signs a user in (Development: POST /otp answers
 * with the code, so no SMS is needed).
 */
export async function startAuthUnderAttack(): Promise<AuthUnderAttack> {
  const dispatchers: Agent[] = [];
  const phoneNumbers: string[] = [];
  /** A client with its own keep-alive connection, trusting the service's self-signed certificate. */
  const connection = (): Dispatcher => {
    const agent = new Agent({ connections: 1, connect: { rejectUnauthorized: false } });
    dispatchers.push(agent);
    return agent;
  };
  await Promise.all([buildService('cache'), buildService('auth')]);
  const cache = await startService({ name: 'cache', ...npmStart('cache'), env: serviceEnv('cache', {}) });
  const client = authClient();
  const auth = await startService({
    name: 'auth',
    ...npmStart('auth'),
    env: {
      ...serviceEnv('auth', { cacheAddress: `127.0.0.1:${cache.port!}` }),
      Oidc__ClientId: client.clientId,
      Oidc__ClientSecret: client.secret,
      Auth__AllowedRedirectUris: 'https://app.example.test/',
      NODE_ENV: 'Development',
    },
  });
  const baseUrl = `https://127.0.0.1:${auth.port!}`;
  const close = async (): Promise<void> => {
    await Promise.all(dispatchers.map((dispatcher) => dispatcher.close()));
    await auth.stop();
    await cache.stop();
    await deleteUsersNamed(phoneNumbers);
  };
  try {
    const phoneNumber = newPhoneNumber();
    phoneNumbers.push(phoneNumber);
    const dispatcher = connection();
    const issued = await fetch(`${baseUrl}/otp`, { method: 'POST', headers: json, body: JSON.stringify({ phoneNumber }), dispatcher });
    const { code } = (await issued.json()) as { code: string };
    const verified = await fetch(`${baseUrl}/otp/verify`, { method: 'POST', headers: { ...json, 'x-role-claim': 'subscriber' }, body: JSON.stringify({ phoneNumber, code }), dispatcher });
    if (verified.status !== 200) throw new Error(`POST /otp/verify answered ${verified.status}`);
    const session = `TokenId=${cookieValue(verified.headers.getSetCookie(), 'TokenId')!}`;
    return {
      auth,
      probe: () => {
        const probe = connection();
        return async () => {
          const reply = await fetch(`${baseUrl}/auth`, { headers: { cookie: session }, dispatcher: probe });
          await reply.arrayBuffer();
          if (reply.status !== 200) throw new Error(`GET /auth answered ${reply.status}`);
        };
      },
      attacker: (hostile) => hostileWorker(HTTPS_REQUEST, { ...hostile, port: auth.port, body: hostile.body === undefined ? undefined : Buffer.from(hostile.body).toString('base64') }),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
