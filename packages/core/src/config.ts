import { z } from 'zod';
import { parseRedisUrl, parseStoreUrl } from './redis-url.js';

/** Raised when the environment does not describe a valid configuration; lists every problem. */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Validates environment variables against a schema whose keys are the variable names
 * (`Section__Key`), reporting every missing or invalid variable at once, one line each.
 * Empty strings count as unset, so `FOO=` in a manifest behaves like an absent FOO.
 */
export function parseEnv<S extends z.ZodRawShape>(
  shape: S,
  env: Env,
  /** Rules across variables (e.g. required only with some backend), over the raw values; each returns problem lines. */
  crossCheck: (input: Readonly<Record<string, string>>) => string[] = () => [],
): z.infer<z.ZodObject<S>> {
  const input: Record<string, string> = {};
  for (const name of Object.keys(shape)) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') input[name] = value.trim();
  }
  const result = z.object(shape).safeParse(input);
  const problems = (result.error?.issues ?? []).map((issue) => {
    const name = String(issue.path[0] ?? '(root)');
    return input[name] === undefined ? `${name}: is required` : `${name}: ${issue.message}`;
  });
  problems.push(...crossCheck(input));
  if (problems.length > 0 || !result.success) throw new ConfigError([...new Set(problems)]);
  return result.data;
}

/**
 * A transform through `parse`, whose thrown message becomes the variable's problem: for values a
 * function of the service already knows how to read (a Redis URL, an allowlist).
 */
export const parsedBy =
  <In, Out>(parse: (value: In) => Out) =>
  (value: In, ctx: z.RefinementCtx): Out => {
    try {
      return parse(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
      return z.NEVER;
    }
  };

/** `host:port` or `[ipv6]:port` of the cache service, optionally after `grpc://` or `dns:`, optionally with a trailing `/`. */
const CACHE_ADDRESS = /^(grpc:\/\/|dns:)?(\[[0-9a-fA-F:.]+\]|[^\s/:[\]]+):\d{1,5}\/?$/;

/** The gRPC target of a cache address: without `grpc://` (no scheme gRPC resolves) and the trailing `/`. */
export const cacheTarget = (address: string): string => address.replace(/^grpc:\/\//, '').replace(/\/$/, '');

/** Schema builders for the kinds of values the services' variables hold. */
/** How a boolean variable says yes (`env.bool` accepts true/false, 1/0, yes/no); for cross-variable checks over raw values. */
export const isTrueFlag = (value: string | undefined): boolean => value === 'true' || value === '1' || value === 'yes';

export const env = {
  string: () => z.string(),
  port: (fallback?: number) => {
    const schema = z.coerce.number().int().min(0).max(65535);
    return fallback === undefined ? schema : schema.default(fallback);
  },
  positiveInt: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  bool: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
      .transform(isTrueFlag)
      .default(fallback),
  url: (protocols: readonly string[]) =>
    z.string().refine(
      (value) => {
        try {
          return protocols.includes(new URL(value).protocol.replace(/:$/, ''));
        } catch {
          return false;
        }
      },
      { message: `must be a URL with scheme ${protocols.join(' or ')}` },
    ),
  /** A Redis URL (`parseRedisUrl`: standalone, Sentinel or Cluster), kept as written. */
  redisUrl: () =>
    z.string().superRefine((url, ctx) => {
      parsedBy(parseRedisUrl)(url, ctx);
    }),
  /** STORE_URL: `memory://` or a Redis URL, read into a StoreConfig. */
  storeUrl: () => z.string().transform(parsedBy(parseStoreUrl)),
  /** The cache service's address (Cache__Url), as its gRPC target. */
  cacheAddress: () => z.string().regex(CACHE_ADDRESS, { message: 'must be host:port of the cache service (grpc:// or dns: prefix allowed)' }).transform(cacheTarget),
  /** A comma-separated list of non-empty items (e.g. API keys accepted during rotation). */
  list: () =>
    z.string().transform((value, ctx) => {
      const items = value.split(',').map((item) => item.trim()).filter((item) => item !== '');
      if (items.length === 0) ctx.addIssue({ code: 'custom', message: 'must list at least one value' });
      return items;
    }),
};

/**
 * The variables every service has (README, "Configuration"); spread into a service's schema. Each
 * setting's `.describe()` is its documentation: `make docs` writes the settings tables from it.
 */
export const operationsEnv = {
  Management__Port: env.port(9464).describe('Port of the management listener: `GET /metrics`, `/livez`, `/readyz`'),
  Log__Level: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { message: 'must be fatal, error, warn, info, debug, trace or silent' })
    .default('info')
    .describe('fatal, error, warn, info, debug, trace or silent'),
  Shutdown__GracePeriodMs: env.positiveInt(10_000).describe('On SIGTERM: readiness off, in-flight requests drained, connections closed; exit 1 past this'),
  Otlp__Endpoint: env.url(['http', 'https']).optional().describe('OTLP/HTTP collector base URL, e.g. `http://otel-collector:4318`; tracing is off when unset'),
};
