// What clients send through a forward-auth proxy, and what the application behind it is told:
// shared by the journeys through the proxies on this machine (proxy-journey.ts) and through the
// nginx Pod of the cluster suite (test/cluster/cluster.test.ts).
import type { SeenRequest } from './demo-upstream.js';

/** What a browser's top-level navigation sends (Chromium's). */
export const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8' };
export const API = { accept: 'application/json' };
/** A page with a query that a naive `rd=` would cut at its `&`. */
export const PAGE_PATH = '/orders/7?tab=items&from=2026-01-01';

/** Headers a client writes to pass for someone else, or to steer the check. */
export const forged = (page: string): Record<string, string> => ({
  'x-auth-request-user': 'admin',
  'x-auth-request-phone': '+15550000000',
  'x-auth-request-groups': 'clients,admins',
  'x-auth-request-role': 'client',
  x_auth_request_user: 'admin',
  'x-original-url': `${page}-forged`,
  'x-original-method': 'GET',
  'x-rewrite-url': '/admin',
  'x-forwarded-method': 'GET',
  'x-forwarded-proto': 'https',
  'x-forwarded-host': 'evil.example',
  'x-forwarded-uri': '/phish',
  'x-forwarded-for': '203.0.113.9',
});

/** The identity the application was given (and whether a client's underscored header names got through). */
export const identityAt = (request: SeenRequest | undefined): Record<string, unknown> => ({
  user: request?.headers['x-auth-request-user'],
  phone: request?.headers['x-auth-request-phone'],
  groups: request?.headers['x-auth-request-groups'],
  role: request?.headers['x-auth-request-role'],
  bearer: typeof request?.headers.authorization === 'string' && request.headers.authorization.startsWith('Bearer eyJ'),
  underscored: Object.keys(request?.headers ?? {}).filter((name) => name.includes('_')),
});
