import * as oidc from 'openid-client';
import { AppError, badGateway, unavailable } from '@sp/core';

/** openid-client's codes for an answer that never came or was not an OAuth answer at all (an HTML error page). */
const UNREACHABLE_CODES = new Set(['OAUTH_TIMEOUT', 'OAUTH_ABORT', 'OAUTH_RESPONSE_IS_NOT_CONFORM', 'OAUTH_RESPONSE_IS_NOT_JSON']);
/** `fetch` failing (refused, reset, DNS) or a deadline; by name, since the error may come from another realm (a test VM). */
const TRANSPORT_ERRORS = new Set(['TypeError', 'TimeoutError', 'AbortError']);

const statusOf = (value: unknown): number | undefined =>
  typeof value === 'object' && value !== null && 'status' in value && typeof value.status === 'number' ? value.status : undefined;

function isUnreachableLink(err: unknown): boolean {
  if (err instanceof oidc.ResponseBodyError) return err.status >= 500;
  if (err instanceof oidc.ClientError && err.code !== undefined && UNREACHABLE_CODES.has(err.code)) {
    // An unexpected status (discovery of a realm that does not exist: 404) is a refusal, not an outage.
    const status = statusOf(err.cause);
    return status === undefined || status >= 500;
  }
  return typeof err === 'object' && err !== null && 'name' in err && TRANSPORT_ERRORS.has(String(err.name));
}

/** The identity provider could not be reached, timed out, or failed on its side (5xx); openid-client may wrap the cause. */
export function isOidcUnreachable(err: unknown): boolean {
  let link: unknown = err;
  for (let depth = 0; depth < 4 && link !== undefined && link !== null; depth++) {
    if (isUnreachableLink(link)) return true;
    link = link instanceof oidc.ClientError || link instanceof oidc.ResponseBodyError || link instanceof AppError ? link.cause : undefined;
  }
  return false;
}

/**
 * A failed call the service made to the identity provider on its own behalf (a token grant, a
 * revocation, discovery): never the caller's fault. Unreachable or failing: 503; any refusal
 * (wrong client secret, unknown realm, a malformed answer): 502.
 */
export function fromOidcError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isOidcUnreachable(err)) return unavailable('identity provider', err);
  return badGateway('identity provider', err);
}
