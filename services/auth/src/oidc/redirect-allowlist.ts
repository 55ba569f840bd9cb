/** One allowed redirect target: a whole origin, or an origin with a path prefix. */
interface AllowedTarget {
  origin: string;
  /** `undefined`: any path of the origin. */
  pathPrefix: string | undefined;
}

/** Where /login may send the browser back to (Auth__AllowedRedirectUris). */
export interface RedirectAllowlist {
  readonly entries: readonly string[];
  /**
   * The redirect URI to use (the parsed, re-serialized form, so the browser goes exactly where
   * the check looked) or undefined when `candidate` is not allowed.
   */
  check(candidate: string | undefined): string | undefined;
}

/** Longest redirect URI accepted: it travels inside `state`, which is part of a cache key (≤ 1024 bytes). */
export const MAX_REDIRECT_URI_LENGTH = 512;

/** What is wrong with an allowlist entry, if anything. */
function entryProblem(entry: string, url: URL): string | undefined {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry user information';
  if (entry.includes('?') || entry.includes('#')) return 'must have no query or fragment';
  return undefined;
}

function parseEntry(entry: string): AllowedTarget {
  if (!URL.canParse(entry)) throw new Error(`"${entry}" is not an absolute URL`);
  const url = new URL(entry);
  const problem = entryProblem(entry, url);
  if (problem !== undefined) throw new Error(`"${entry}" ${problem}`);
  // "https://app.example.com" and "https://app.example.com/" both name the whole origin.
  return { origin: url.origin, pathPrefix: url.pathname === '/' ? undefined : url.pathname };
}

function parseCandidate(candidate: string): URL | undefined {
  if (candidate.length > MAX_REDIRECT_URI_LENGTH || !URL.canParse(candidate)) return undefined;
  const url = new URL(candidate);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  // https://good.example@evil.example and friends: the host is what counts, but refuse them anyway.
  if (url.username !== '' || url.password !== '') return undefined;
  return url;
}

/**
 * Parses the allowlist; throws with a readable message on an invalid entry. Entries are exact
 * origins (`https://app.example.com`: any path on it) or prefixes (`https://app.example.com/cb/`:
 * same origin and a path starting with it; end a prefix with `/` so that `/cb` does not admit
 * `/cbx`). Candidates are compared after URL parsing, so `..` segments, default ports, case of
 * the host and percent-encoding cannot smuggle another target through.
 */
export function parseAllowlist(entries: readonly string[]): RedirectAllowlist {
  const targets = entries.map(parseEntry);
  return {
    entries,
    check(candidate) {
      if (candidate === undefined || candidate === '') return undefined;
      const url = parseCandidate(candidate);
      if (url === undefined) return undefined;
      const allowed = targets.some((target) => target.origin === url.origin && (target.pathPrefix === undefined || url.pathname.startsWith(target.pathPrefix)));
      return allowed ? url.href : undefined;
    },
  };
}
