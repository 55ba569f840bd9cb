// The forms of a Redis URL that settings accept (REDIS_URL, STORE_URL), read without connecting:
// config validation at start uses them, and @sp/storage connects to what they describe.

/**
 * Where Redis is, from one URL:
 *   redis://[user:password@]host:port[/db]   and rediss:// for TLS (standalone)
 *   redis+sentinel://[:password@]host:port[,host:port...]/masterName[/db]
 *   redis+cluster://[:password@]host:port[,host:port...]
 */
export type RedisTarget =
  | { kind: 'standalone'; url: string }
  | { kind: 'sentinel'; sentinels: Array<{ host: string; port: number }>; name: string; password?: string; db: number }
  | { kind: 'cluster'; nodes: Array<{ host: string; port: number }>; password?: string };

const MULTI_HOST = /^redis\+(sentinel|cluster):\/\/(?:([^@/]*)@)?([^/]+)(?:\/([^/]*)(?:\/(\d+))?)?$/;

function parseHosts(list: string, defaultPort: number): Array<{ host: string; port: number }> {
  return list.split(',').map((item) => {
    const match = /^([^:]+)(?::(\d+))?$/.exec(item.trim());
    if (!match) throw new Error(`invalid host "${item}"`);
    return { host: match[1]!, port: match[2] === undefined ? defaultPort : Number(match[2]) };
  });
}

function passwordOf(userInfo: string | undefined): string | undefined {
  if (userInfo === undefined || userInfo === '') return undefined;
  return decodeURIComponent(userInfo.includes(':') ? userInfo.slice(userInfo.indexOf(':') + 1) : userInfo);
}

const REDIS_SCHEME = /^(rediss?|redis\+sentinel|redis\+cluster):/;
const REDIS_URL_FORMS = 'must be redis://, rediss://, redis+sentinel://host:port,.../master or redis+cluster://host:port,...';

/** A redis:// or rediss:// URL, checked: one host, as WHATWG URLs (and ioredis) read it. */
function standaloneUrl(url: string): string {
  if (!URL.canParse(url)) throw new Error(REDIS_URL_FORMS);
  if (new URL(url).hostname === '') throw new Error('a redis:// or rediss:// URL must name a host');
  return url;
}

/** Parses a Redis URL; throws with a readable message when it is not one of the forms above. */
export function parseRedisUrl(url: string): RedisTarget {
  if (!REDIS_SCHEME.test(url)) throw new Error(REDIS_URL_FORMS);
  if (/^rediss?:/.test(url)) return { kind: 'standalone', url: standaloneUrl(url) };
  const match = MULTI_HOST.exec(url);
  if (!match) throw new Error(REDIS_URL_FORMS);
  const [, kind, userInfo, hosts, name, db] = match;
  const password = passwordOf(userInfo);
  if (kind === 'cluster') return { kind: 'cluster', nodes: parseHosts(hosts!, 6379), ...(password ? { password } : {}) };
  if (!name) throw new Error('a redis+sentinel URL must name the master: redis+sentinel://host:26379/mymaster');
  return { kind: 'sentinel', sentinels: parseHosts(hosts!, 26379), name, db: Number(db ?? 0), ...(password ? { password } : {}) };
}

/** Where a service keeps its shared state (STORE_URL): Redis, or this process' memory (local runs only). */
export type StoreConfig = { kind: 'redis'; url: string } | { kind: 'memory' };

/** Reads a STORE_URL: `memory://`, or a Redis URL as `parseRedisUrl` takes it; throws with what is wrong. */
export function parseStoreUrl(url: string): StoreConfig {
  if (/^memory:/.test(url)) return { kind: 'memory' };
  if (!REDIS_SCHEME.test(url)) throw new Error(`must be memory:// or a Redis URL (${REDIS_URL_FORMS})`);
  parseRedisUrl(url);
  return { kind: 'redis', url };
}
