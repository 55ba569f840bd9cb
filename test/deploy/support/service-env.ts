import { infra } from '../../support/infra.js';
import type { Service } from './service-config.js';

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
