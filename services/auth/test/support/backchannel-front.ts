import { createServer, type Server } from 'node:http';
import { listen } from '@sp/http';
import type { RunningAuth } from './auth-fixture.js';

export interface BackchannelFront {
  /** Where Keycloak posts Logout Tokens: `http://127.0.0.1:{port}/backchannel-logout`. */
  url: string;
  /** Every `logout_token` Keycloak posted, in order. */
  tokens: string[];
  /** `true`: pass what Keycloak posts on to the auth instance; `false`: only record it (answer 200). */
  forwarding: boolean;
  /** The auth instance's answers to what was passed on. */
  answers: number[];
  close(): Promise<void>;
}

/**
 * What an ingress is to Keycloak in a deployment: a plain-HTTP front on a loopback port that
 * passes POST /backchannel-logout on to an auth instance under test (which serves HTTPS with a
 * certificate Keycloak's JVM does not trust). It records the Logout Tokens too, so a test can
 * hold one back and post it itself.
 */
export async function startBackchannelFront(auth: RunningAuth): Promise<BackchannelFront> {
  const front: Omit<BackchannelFront, 'url' | 'close'> = { tokens: [], forwarding: true, answers: [] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const token = new URLSearchParams(body).get('logout_token');
      if (token !== null) front.tokens.push(token);
      const pass = front.forwarding
        ? auth.client.request(req.method ?? 'POST', req.url ?? '/', { headers: { 'content-type': req.headers['content-type'] ?? '' }, body }).then((reply) => {
            front.answers.push(reply.status);
            return reply.status;
          })
        : Promise.resolve(200);
      pass.then(
        (status) => res.writeHead(status).end(),
        () => res.writeHead(502).end(),
      );
    });
  });
  const port = await listen(server, 0, '127.0.0.1');
  return Object.assign(front, {
    url: `http://127.0.0.1:${port}/backchannel-logout`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
