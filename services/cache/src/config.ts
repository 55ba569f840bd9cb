import { z } from 'zod';
import { env, operationsEnv, parseEnv, type Env } from '@sp/platform';

export interface CacheConfig {
  port: number;
  host: string;
  managementPort: number;
  backend: { kind: 'memory'; capacity: number } | { kind: 'redis'; url: string; keyPrefix: string };
  maxValueBytes: number;
  logLevel: string;
  shutdownGraceMs: number;
}

/** The only reader of the environment; every variable is validated at start. */
export function loadConfig(environment: Env = process.env): CacheConfig {
  const vars = parseEnv(
    {
      Cache__Port: env.port(7777),
      Cache__Host: env.string().default('0.0.0.0'),
      Cache__Backend: z.enum(['memory', 'redis'], { message: 'must be memory or redis' }).default('memory'),
      Cache__Capacity: env.positiveInt(1000),
      Cache__MaxValueBytes: env.positiveInt(1024 * 1024),
      Cache__RedisUrl: env.url(['redis', 'rediss', 'redis+sentinel', 'redis+cluster']).optional(),
      Cache__KeyPrefix: env.string().default('cache:'),
      ...operationsEnv,
    },
    environment,
    (input) => (input.Cache__Backend === 'redis' && input.Cache__RedisUrl === undefined ? ['Cache__RedisUrl: is required when Cache__Backend is redis'] : []),
  );
  return {
    port: vars.Cache__Port,
    host: vars.Cache__Host,
    managementPort: vars.Management__Port,
    backend:
      vars.Cache__Backend === 'redis'
        ? { kind: 'redis', url: vars.Cache__RedisUrl!, keyPrefix: vars.Cache__KeyPrefix }
        : { kind: 'memory', capacity: vars.Cache__Capacity },
    maxValueBytes: vars.Cache__MaxValueBytes,
    logLevel: vars.Log__Level,
    shutdownGraceMs: vars.Shutdown__GracePeriodMs,
  };
}
