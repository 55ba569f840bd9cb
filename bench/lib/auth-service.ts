// The auth service as the benchmarks run it: the built code (`services/auth/dist/main.js`, started
// as `npm start` does) on the real dependencies, and an OTP client for its sessions.
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Agent, fetch } from 'undici';
import { freePort, startChild } from './stats.ts';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));
const authMain = here('../../services/auth/dist/main.js');
const authInstrument = here('../../services/auth/dist/instrument.js');

export interface Bench {
  certPath: string;
  keyPath: string;
  cachePort: number;
  infra: Record<string, string>;
  client: { clientId: string; secret: string };
}

/** The built auth service as `npm start` runs it, on the real dependencies; Development, so /otp answers with the code; `env` adds or overrides settings. */
export async function startAuthService(bench: Bench, env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  const { infra } = bench;
  const child = await startChild(
    process.execPath,
    ['--enable-source-maps', '--import', authInstrument, authMain],
    {
      Auth__Port: String(port),
      Auth__Host: '127.0.0.1',
      Auth__PublicBaseUrl: url,
      Auth__TrustProxy: 'true',
      Management__Port: String(await freePort()),
      Tls__CertPath: bench.certPath,
      Tls__KeyPath: bench.keyPath,
      Oidc__Realm: infra.KEYCLOAK_REALM!,
      Oidc__ServerUrl: infra.KEYCLOAK_URL!,
      Oidc__ClientId: bench.client.clientId,
      Oidc__ClientSecret: bench.client.secret,
      Oidc__AdminCredentials__Username: infra.KEYCLOAK_ADMIN_USERNAME!,
      Oidc__AdminCredentials__Password: infra.KEYCLOAK_ADMIN_PASSWORD!,
      MessageBroker__BrokerList: infra.KAFKA_BROKERS!,
      Cache__Url: `127.0.0.1:${bench.cachePort}`,
      NODE_ENV: 'Development',
      Otp__ResendCooldownSeconds: '0',
      Otp__MaxPerPhone: '1000000',
      Otp__MaxPerIp: '1000000',
      // The run's numbers are consecutive (one prefix) and far over any sensible SMS budget.
      Otp__MaxPerPrefix: '1000000',
      Otp__MaxPerMinute: '1000000',
      ...env,
    },
    /auth service listening/,
  );
  return { child, url };
}

/** The OTP flow through the auth service: issue (code from the Development answer) and verify. */
export function otpClient(authUrl: string, ca: string) {
  const dispatcher = new Agent({ connect: { ca }, connections: 16 });
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, string>; cookie: string | undefined }> => {
    const response = await fetch(`${authUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), dispatcher });
    const text = await response.text();
    return { status: response.status, body: JSON.parse(text || '{}') as Record<string, string>, cookie: response.headers.getSetCookie()[0]?.split(';')[0] };
  };
  return {
    /** Each call from its own client IP (X-Forwarded-For, trusted in this setup). */
    async issue(phoneNumber: string, i: number): Promise<string> {
      const reply = await post('/otp', { phoneNumber }, { 'x-forwarded-for': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` });
      if (reply.status !== 200) throw new Error(`/otp answered ${reply.status} ${JSON.stringify(reply.body)}`);
      return reply.body.code!;
    },
    async verify(phoneNumber: string, code: string): Promise<string> {
      const reply = await post('/otp/verify', { phoneNumber, code }, { 'x-role-claim': 'client' });
      if (reply.status !== 200 || reply.cookie === undefined) throw new Error(`/otp/verify answered ${reply.status} ${JSON.stringify(reply.body)}`);
      return reply.cookie;
    },
    async bearerOf(cookie: string): Promise<string> {
      const response = await fetch(`${authUrl}/auth`, { headers: { cookie }, dispatcher });
      await response.text();
      return response.headers.get('authorization')!;
    },
    close: () => dispatcher.close(),
  };
}

