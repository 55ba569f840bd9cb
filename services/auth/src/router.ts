import type Koa from 'koa';
import { Router } from '@koa/router';
import { byMethod, type DirectRoute } from '@sp/http';
import type { ForwardAuth } from './http/forward-auth.js';
import { startLogin } from './http/login.js';
import { logout } from './http/logout.js';
import { finishLogin } from './http/oidc-redirect.js';
import { requestOtp } from './http/otp-request.js';
import { verifyOtp } from './http/otp-verify.js';
import { backchannelLogout } from './http/backchannel-logout.js';
import type { AuthServices } from './services.js';
import { endSession, endSessions } from './http/sessions-end.js';
import { listSessions } from './http/sessions-list.js';
import { signIn } from './http/signin.js';

/**
 * Every fixed route of the API (openapi.yaml) by its exact path; paths are case-sensitive. The
 * platform's front middleware dispatches them with one map lookup: GET /auth runs on every
 * authenticated request of the platform (`make bench` measures it against bare Koa). The one path
 * with a parameter goes to `parameterRoutes`.
 */
export function routeTable(s: AuthServices, forward: ForwardAuth): ReadonlyMap<string, Koa.Middleware> {
  return new Map([
    ['/otp', byMethod({ POST: requestOtp(s) })],
    ['/otp/verify', byMethod({ POST: verifyOtp(s) })],
    ['/login', byMethod({ GET: startLogin(s) })],
    ['/signin', byMethod({ GET: signIn(s) })],
    ['/redirect', byMethod({ GET: finishLogin(s) })],
    // Every method alike: Envoy's ext_authz checks with the original request's method.
    ['/auth', forward.middleware],
    ['/logout', byMethod({ POST: logout(s) })],
    ['/sessions', byMethod({ GET: listSessions(s), DELETE: endSessions(s) })],
    ['/backchannel-logout', byMethod({ POST: backchannelLogout(s) })],
  ]);
}

/**
 * GET routes answered before Koa when memory alone can answer them: GET /auth for a session the
 * near cache holds (bench/auth.bench.ts). Everything else about them is the Koa route's.
 */
export function directRoutes(forward: ForwardAuth): ReadonlyMap<string, DirectRoute> {
  return new Map([['/auth', forward.fromMemory]]);
}

/** The routes with a path parameter, after the fixed ones: `/sessions/{id}`. */
export function parameterRoutes(s: AuthServices): Koa.Middleware {
  const router = new Router({ sensitive: true, strict: true });
  router.all('/sessions/:id', byMethod({ DELETE: endSession(s) }));
  return router.routes() as Koa.Middleware;
}
