// Apart from https-client.ts, whose contract checks need jest: make bench reads cookies too.

/** The value of a cookie in Set-Cookie headers. */
export function cookieValue(cookies: readonly string[], name: string): string | undefined {
  for (const cookie of cookies) {
    const [pair = ''] = cookie.split(';');
    const eq = pair.indexOf('=');
    if (eq !== -1 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}
