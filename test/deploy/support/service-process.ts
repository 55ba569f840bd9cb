import { spawn, type ChildProcess } from 'node:child_process';
import { infra } from '../../support/infra.js';
import type { Service } from './service-config.js';

/** A service running as a child process, as its container runs it. */
export interface RunningService {
  name: string;
  /** The API port (undefined for the controller, which serves none). */
  port: number | undefined;
  managementPort: number;
  /** Every line the process wrote, stdout and stderr. */
  output: string[];
  /** GET on the management port. */
  management(path: string): Promise<{ status: number; body: string }>;
  /** SIGTERM, then the exit code (null when it had to be killed). */
  stop(timeoutMs?: number): Promise<number | null>;
}

export interface StartOptions {
  name: Service;
  cwd: string;
  /** Arguments after `node`. */
  args: readonly string[];
  env: Record<string, string>;
  timeoutMs?: number;
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

/**
 * Starts `node <args>` with only the given environment (plus PATH and HOME) and waits for the
 * service's start log line, which carries its ports (the tests listen on port 0).
 */
export async function startService(options: StartOptions): Promise<RunningService> {
  const child = spawn(process.execPath, [...options.args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const ports = await new Promise<{ port: number | undefined; managementPort: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${options.name} did not start within ${options.timeoutMs ?? 20_000} ms:\n${output.join('\n')}`)), options.timeoutMs ?? 20_000);
    const onLine = (line: string): void => {
      output.push(line);
      try {
        const record = JSON.parse(line) as { managementPort?: number; port?: number };
        if (typeof record.managementPort === 'number') {
          clearTimeout(timer);
          resolve({ port: record.port, managementPort: record.managementPort });
        }
      } catch {
        // not a JSON log line (e.g. a Node warning)
      }
    };
    for (const stream of [child.stdout, child.stderr]) {
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        lines.filter((line) => line.trim() !== '').forEach(onLine);
      });
    }
    child.once('exit', (code) => {
      clearTimeout(timer);
      setTimeout(() => reject(new Error(`${options.name} exited with ${code} before it listened:\n${output.join('\n')}`)), 50);
    });
  });
  return {
    name: options.name,
    ...ports,
    output,
    async management(path) {
      const response = await fetch(`http://127.0.0.1:${ports.managementPort}${path}`, { signal: AbortSignal.timeout(10_000) });
      return { status: response.status, body: await response.text() };
    },
    async stop(timeoutMs = 15_000) {
      if (child.exitCode !== null) return child.exitCode;
      const done = exited(child);
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await done;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Addresses of what the services need, besides each other. */
export interface Dependencies {
  cacheAddress?: string;
  registryUrl?: string;
  gatewayUrl?: string;
  localizationUrl?: string;
  kubeconfig?: string;
  /** The controller's own namespace on the API server: its Lease lives there and it watches only there. */
  kubeNamespace?: string;
}

/** A Twilio-shaped account SID; not a secret, and no real account. */
export const TEST_ACCOUNT_SID = `AC${'0'.repeat(32)}`;
export const TEST_KEYS = { api: 'deploy-test-api-key', webhooksCode: 'deploy-test-code', stripeSecret: 'whsec_deploytest', twilioToken: 'deploy-test-twilio-token' };

type EnvOf = (deps: Dependencies) => Record<string, string>;

const keycloak = (): Record<string, string> => ({
  Oidc__ServerUrl: infra('KEYCLOAK_URL'),
  Oidc__Realm: infra('KEYCLOAK_REALM'),
  Oidc__ClientId: infra('KEYCLOAK_SERVICES_CLIENT_ID'),
  Oidc__ClientSecret: infra('KEYCLOAK_SERVICES_CLIENT_SECRET'),
});

const environments: Record<Service, EnvOf> = {
  cache: () => ({ Cache__Port: '0', Cache__Host: '127.0.0.1' }),
  'graph-registry': () => ({ Registry__Port: '0', Registry__Host: '127.0.0.1', STORE_URL: infra('REDIS_URL'), MONITOR_API_KEY: TEST_KEYS.api }),
  auth: (deps) => ({
    ...keycloak(),
    Auth__Port: '0',
    Auth__Host: '127.0.0.1',
    Auth__PublicBaseUrl: 'https://localhost:5555',
    // As the chart runs it by default: Production, TLS ending at the ingress in front.
    Tls__TerminatedUpstream: 'true',
    Oidc__AdminCredentials__Username: infra('KEYCLOAK_ADMIN_USERNAME'),
    Oidc__AdminCredentials__Password: infra('KEYCLOAK_ADMIN_PASSWORD'),
    MessageBroker__BrokerList: infra('KAFKA_BROKERS'),
    Cache__Url: deps.cacheAddress ?? '',
    // The traffic's +1 415 numbers are monitored, so auth_otp_monitored_total{country} gets a sample.
    Otp__MonitoredCountries: 'US',
  }),
  webhooks: (deps) => ({
    ...keycloak(),
    Webhooks__Port: '0',
    Webhooks__Host: '127.0.0.1',
    Webhooks__PublicBaseUrl: 'https://webhooks.example.com',
    WEBHOOKS_API_KEY: TEST_KEYS.webhooksCode,
    PAYMENT_PROVIDER_API_KEY: 'sk_test_123',
    PAYMENT_PROVIDER_API_URL: infra('STRIPE_MOCK_URL'),
    PAYMENT_PROVIDER_WEBHOOKS_SECRET: TEST_KEYS.stripeSecret,
    SMS_PROVIDER_ACCOUNT_SID: TEST_ACCOUNT_SID,
    SMS_PROVIDER_AUTH_TOKEN: TEST_KEYS.twilioToken,
    GRAPHQL_API_URL: deps.gatewayUrl ?? 'http://127.0.0.1:9/graphql',
    LOCALIZATION_API_URL: deps.localizationUrl ?? 'http://127.0.0.1:9',
    STORE_URL: infra('REDIS_URL'),
    Cache__Url: deps.cacheAddress ?? '',
    MessageBroker__BrokerList: infra('KAFKA_BROKERS'),
    AccountUrl: 'https://app.example.com/account',
    BillingPortalUrl: 'https://billing.example.com/portal',
    ClientLinkBaseUri: 'https://app.example.com/c',
  }),
  'graph-controller': (deps) => ({
    Registry__Url: deps.registryUrl ?? 'http://127.0.0.1:9',
    Registry__ApiKey: TEST_KEYS.api,
    Controller__LeaseNamespace: deps.kubeNamespace ?? 'default',
    Controller__Namespaces: deps.kubeNamespace ?? '',
    POD_NAME: 'deploy-test',
    KUBECONFIG: deps.kubeconfig ?? '',
  }),
};

/**
 * The smallest environment each service starts with against the local dependencies
 * (.cache/run/infra.env): ports 0 on loopback, and the required variables of its config.ts.
 */
export function serviceEnv(name: Service, deps: Dependencies): Record<string, string> {
  return { Management__Port: '0', Log__Level: 'info', Shutdown__GracePeriodMs: '5000', ...environments[name](deps) };
}
