import type Koa from 'koa';
import { byMethod } from '@sp/platform';
import { forwardAuth } from './forward-auth.js';
import { startLogin } from './login.js';
import { logout } from './logout.js';
import { finishLogin } from './oidc-redirect.js';
import { requestOtp } from './otp-request.js';
import { verifyOtp } from './otp-verify.js';
import type { AuthServices } from './services.js';

/**
 * Every route of the API (openapi.yaml) by its exact path; paths are case-sensitive. The API has
 * six fixed paths and no parameters, so the platform's front middleware dispatches them with one
 * map lookup: a pattern router buys nothing here, and GET /auth runs on every authenticated
 * request of the platform (`make bench` measures it against bare Koa).
 */
export function routeTable(s: AuthServices): ReadonlyMap<string, Koa.Middleware> {
  return new Map([
    ['/otp', byMethod({ POST: requestOtp(s) })],
    ['/otp/verify', byMethod({ POST: verifyOtp(s) })],
    ['/login', byMethod({ GET: startLogin(s) })],
    ['/redirect', byMethod({ GET: finishLogin(s) })],
    ['/auth', byMethod({ GET: forwardAuth(s) })],
    ['/logout', byMethod({ POST: logout(s) })],
  ]);
}
