import { join } from 'node:path';
import { settingsOf } from '../../../scripts/docs/targets.js';

export const repoRoot = join(import.meta.dirname, '../../..');

/** The services the charts deploy, by chart name (the same as their services/<name> folder). */
export const services = ['cache', 'auth', 'graph-registry', 'webhooks', 'graph-controller'] as const;
export type Service = (typeof services)[number];

export interface ConfigVariables {
  /** Every variable the service's config.ts reads. */
  all: Set<string>;
  /** Those without a default and not optional: the service refuses to start without them. */
  required: Set<string>;
}

/**
 * The variables a service reads, with those it requires: its declared `settings` (src/config.ts,
 * the only reader of the environment), read as `make docs` reads them. A setting is required when
 * its schema refuses the variable unset.
 */
export async function configVariables(service: Service): Promise<ConfigVariables> {
  const settings = await settingsOf(repoRoot, service);
  const entries = Object.entries(settings);
  return {
    all: new Set(entries.map(([name]) => name)),
    required: new Set(entries.filter(([, schema]) => !schema.safeParse(undefined).success).map(([name]) => name)),
  };
}
