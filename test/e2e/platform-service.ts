import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../support/free-port.js';
import { npmStart, startService, type ServiceProcess } from '../support/service-process.js';

export type ServiceName = 'cache' | 'graph-registry' | 'auth' | 'webhooks' | 'graph-controller';

/** The variable naming each service's API port (so several instances run side by side); the controller serves none. */
const PORT_VARIABLE: Record<ServiceName, string | undefined> = {
  cache: 'Cache__Port',
  'graph-registry': 'Registry__Port',
  auth: 'Auth__Port',
  webhooks: 'Webhooks__Port',
  'graph-controller': undefined,
};

export interface ServiceSpec {
  name: ServiceName;
  /** The service's settings for a given API port (some name their own public URL). */
  env(port: number): Record<string, string>;
  /** Fixed ports; free ones by default. */
  port?: number;
  managementPort?: number;
}

/** A start that failed because a free port was taken meanwhile is retried (twice) with other free ports. */
function worthRetrying(spec: ServiceSpec, err: unknown, attempt: number): boolean {
  const fixedPorts = spec.port !== undefined && spec.managementPort !== undefined;
  return !fixedPorts && attempt < 2 && /EADDRINUSE/.test((err as Error).message);
}

/**
 * Starts a service from its build as `npm start` does (run `npx tsc --build` first) on ports
 * chosen before it starts, since the settings of some name their own URL, and waits until its
 * /readyz answers 200, for as long as it makes progress (startService). A free port taken by
 * someone else meanwhile is retried with others.
 */
export async function startPlatformService(spec: ServiceSpec): Promise<ServiceProcess> {
  const launch = npmStart(spec.name);
  if (!existsSync(join(launch.cwd, 'dist', 'main.js'))) throw new Error(`services/${spec.name} is not built: run npx tsc --build first`);
  const portVariable = PORT_VARIABLE[spec.name];
  for (let attempt = 0; ; attempt++) {
    const port = portVariable === undefined ? 0 : (spec.port ?? (await freePort()));
    const managementPort = spec.managementPort ?? (await freePort());
    const env = { ...spec.env(port), ...(portVariable === undefined ? {} : { [portVariable]: String(port) }), Management__Port: String(managementPort) };
    try {
      return await startService({ name: spec.name, ...launch, env, ready: true });
    } catch (err) {
      if (!worthRetrying(spec, err, attempt)) throw err;
    }
  }
}
