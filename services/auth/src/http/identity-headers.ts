import type { Role } from '../config.js';
import type { TokenRecord } from '../sessions/token-store.js';

/** What an identity header of GET /auth's 200 can say about the session's user. */
export type IdentityField = 'user' | 'phone' | 'groups' | 'role';

/** One identity header: its name and the field it carries. */
export interface IdentityHeader {
  field: IdentityField;
  name: string;
}

/** Names in the style of oauth2-proxy's `X-Auth-Request-*`, so ingress-nginx's `auth-response-headers` takes them unchanged. */
const DEFAULT_NAMES: Readonly<Record<IdentityField, string>> = {
  user: 'X-Auth-Request-User',
  phone: 'X-Auth-Request-Phone',
  groups: 'X-Auth-Request-Groups',
  role: 'X-Auth-Request-Role',
};

export const IDENTITY_FIELDS = Object.keys(DEFAULT_NAMES) as IdentityField[];

/** An HTTP field name (RFC 9110 token). */
const TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

/**
 * Names a proxy treats as its own or that GET /auth's answer carries already: an identity header
 * by one of these names would replace the credential, a cookie or the framing.
 */
const RESERVED = new Set(['authorization', 'cookie', 'set-cookie', 'host', 'connection', 'content-length', 'content-type', 'transfer-encoding', 'location', 'cache-control', 'x-content-type-options', 'referrer-policy']);

function parseEntry(entry: string): IdentityHeader {
  const eq = entry.indexOf('=');
  const field = (eq === -1 ? entry : entry.slice(0, eq)).trim();
  if (!(IDENTITY_FIELDS as string[]).includes(field)) throw new Error(`"${field}" is not one of ${IDENTITY_FIELDS.join(', ')}`);
  const name = eq === -1 ? DEFAULT_NAMES[field as IdentityField] : entry.slice(eq + 1).trim();
  if (!TOKEN.test(name)) throw new Error(`"${name}" is not a header name`);
  if (RESERVED.has(name.toLowerCase())) throw new Error(`"${name}" is reserved`);
  return { field: field as IdentityField, name };
}

/**
 * Auth__IdentityHeaders: `field` (the default name) or `field=Header-Name`, or `none`. Throws with a
 * readable message on an unknown field, an invalid or reserved name, or a name given twice.
 */
export function parseIdentityHeaders(entries: readonly string[]): IdentityHeader[] {
  if (entries.length === 1 && entries[0] === 'none') return [];
  const headers = entries.map(parseEntry);
  const seen = new Set<string>();
  for (const { name } of headers) {
    if (seen.has(name.toLowerCase())) throw new Error(`"${name}" is given twice`);
    seen.add(name.toLowerCase());
  }
  return headers;
}

/**
 * A value as a header value: printable ASCII stays as it is, anything else (and `%`, and the list
 * separator `,` inside one item) is percent-encoded, so no name of a group can add a header, break
 * the list or make Node refuse the answer.
 */
const SAFE = /^[\x20-\x24\x26-\x2b\x2d-\x7e]*$/;
const headerValue = (value: string): string => (SAFE.test(value) ? value : encodeURIComponent(value));

/** The values of one session's identity headers, by field. */
function fieldValues(record: TokenRecord, groups: Readonly<Record<Role, string>>): Record<IdentityField, string> {
  const memberOf = record.groups ?? [];
  const roles = (Object.keys(groups) as Role[]).filter((role) => memberOf.includes(groups[role]));
  return {
    user: headerValue(record.subject),
    phone: headerValue(record.phoneNumber),
    groups: memberOf.map(headerValue).join(','),
    role: roles.join(','),
  };
}

/**
 * The identity headers of a session's 200, names and values in turn. Every configured header is
 * there, empty when the session has no such value: a proxy that copies only the headers present
 * (Caddy's `copy_headers`, Traefik's `authResponseHeaders`) then still replaces what the client
 * sent under that name. Built from the server-side record alone; the request's own headers never
 * reach it.
 */
export function identityHeaders(record: TokenRecord, headers: readonly IdentityHeader[], groups: Readonly<Record<Role, string>>): string[] {
  if (headers.length === 0) return [];
  const values = fieldValues(record, groups);
  return headers.flatMap(({ field, name }) => [name, values[field]]);
}
