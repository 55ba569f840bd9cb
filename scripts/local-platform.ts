// The fixed local addresses and development secrets of `make up` (scripts/platform.sh), and the
// demo data of its fixtures (scripts/local-fixtures.ts), in one place: `make demo` and the
// end-to-end suite read them from here.
//
// Only Node's own modules and erasable TypeScript, so Node 24 runs it as is. Run directly, it prints the values
// as shell assignments for scripts/platform.sh:
//   eval "$(node scripts/local-platform.ts)"   # LOCAL_AUTH_PORT=5555, LOCAL_WEBHOOKS_KEY=..., ...

import { pathToFileURL } from 'node:url';

/** Services of `make up`: listening port and management port (`/metrics`, `/livez`, `/readyz`). */
export const localPorts = {
  cache: 7777,
  cacheManagement: 9464,
  graphRegistry: 5145,
  graphRegistryManagement: 9465,
  auth: 5555,
  authManagement: 9466,
  webhooks: 5000,
  webhooksManagement: 9467,
  /** The graph controller has no API port, only its management port. */
  graphControllerManagement: 9468,
  /** Hive Gateway (gateway/), serving the supergraph the registry composed (`/graphql`, `/readiness`). */
  gateway: 4000,
  /** The localization service fixture (scripts/local-fixtures.ts). */
  localization: 4001,
  /** The subgraph fixtures of the user, product and payment services (scripts/local-fixtures.ts). */
  userSubgraph: 4002,
  productSubgraph: 4003,
  paymentSubgraph: 4004,
  /** A fourth subgraph the fixtures serve but no Service announces until `make demo` annotates one. */
  reviewSubgraph: 4005,
} as const;

/**
 * The cache service's memory backend sized for the platform's records (services/cache/README.md, "Cache sizing"); the
 * chart's cache defaults are the same. Login states evict only login states; OTP and rate-limit
 * records are never evicted (a full partition refuses new ones, and /otp answers 503); sessions,
 * drafts and locks share the rest, which unauthenticated requests cannot write to.
 */
export const localCacheSizing = {
  capacity: 10_000,
  partitions: 'oidc:=10000/lru,otp:=20000/reject,ratelimit:=50000/reject',
} as const;

/**
 * The graph controller of `make up` runs against the kube-apiserver of the local dependencies
 * (test/infra/kube.sh) and watches this namespace, where `make up` applies the example annotated
 * Service (k8s/examples/annotated-service.yaml): the registry then holds `orders` →
 * http://orders-graphql.local.svc.cluster.local:8080/graphql. The Lease lives there too.
 */
export const localKube = {
  namespace: 'local',
  exampleGraph: 'orders',
} as const;

/**
 * Federation in `make up`: the subgraph fixtures are announced by Services in the local namespace
 * annotated `graph-registry.io/federation: "true"`; cluster DNS names do not resolve here, so each
 * carries its loopback URL in `graph-registry.io/url`. The controller reads their SDL and
 * publishes it, the registry composes the supergraph, and Hive Gateway polls it from the registry's
 * CDN paths (`/artifacts/v1/{target}/supergraph`, `X-Hive-CDN-Key`).
 */
export const localFederation = {
  /** Subgraph name → its fixture's port; each is announced by the Service `{name}-graphql`. */
  subgraphs: { user: localPorts.userSubgraph, product: localPorts.productSubgraph, payment: localPorts.paymentSubgraph },
  /** The subgraph `make demo` announces (and withdraws again) to show it reaching the gateway. */
  demoSubgraph: { name: 'review', port: localPorts.reviewSubgraph },
  /** Registry__CdnTarget. */
  cdnTarget: 'default',
  /** Hive Gateway's POLLING: its shortest (it refuses less than 10 s). */
  gatewayPollSeconds: 10,
} as const;

/** Development-only secrets `make up` configures and `make demo` signs and authenticates with. */
export const localSecrets = {
  /** MONITOR_API_KEY of the graph registry (X-Api-Key). */
  registryApiKey: 'local-dev-key',
  /** Registry__CdnKeys: Hive Gateway's read-only key of the supergraph's CDN paths (X-Hive-CDN-Key). */
  registryCdnKey: 'local-cdn-key',
  /** WEBHOOKS_API_KEY (the `code` query parameter of both webhooks). */
  webhooksApiKey: 'local-webhooks-key',
  /** PAYMENT_PROVIDER_WEBHOOKS_SECRET (Stripe-Signature). */
  stripeWebhookSecret: 'whsec_local_development_secret',
  /** PAYMENT_PROVIDER_API_KEY, accepted by stripe-mock. */
  stripeApiKey: 'sk_test_local',
  /** SMS_PROVIDER_AUTH_TOKEN (X-Twilio-Signature). */
  twilioAuthToken: 'local-twilio-auth-token',
  /** SMS_PROVIDER_ACCOUNT_SID. */
  twilioAccountSid: 'AC00000000000000000000000000000000',
} as const;

/** Addresses as clients of `make up` reach them. */
export const localUrls = {
  cache: `127.0.0.1:${localPorts.cache}`,
  graphRegistry: `http://127.0.0.1:${localPorts.graphRegistry}`,
  /** HTTPS with a certificate of the local CA that Keycloak trusts (test/infra/local-ca.sh; Auth__PublicBaseUrl). */
  auth: `https://localhost:${localPorts.auth}`,
  webhooks: `http://127.0.0.1:${localPorts.webhooks}`,
  /** Webhooks__PublicBaseUrl: what Twilio signatures are computed over. */
  webhooksPublic: `http://127.0.0.1:${localPorts.webhooks}`,
  /** Hive Gateway's GraphQL endpoint (GRAPHQL_API_URL of the webhooks service). */
  gateway: `http://127.0.0.1:${localPorts.gateway}/graphql`,
  /** Hive Gateway's readiness: 200 once it has loaded a supergraph. */
  gatewayReadiness: `http://127.0.0.1:${localPorts.gateway}/readiness`,
  /** The operations the subgraph fixtures received (`?since=<seq>`, `&type=mutation`), on any of their ports. */
  subgraphOperations: `http://127.0.0.1:${localPorts.userSubgraph}/_operations`,
  localization: `http://127.0.0.1:${localPorts.localization}`,
  /** Links in SMS replies (AccountUrl, BillingPortalUrl, ClientLinkBaseUri). */
  account: 'http://localhost:3000/account',
  billingPortal: 'http://localhost:3000/billing',
  clientBase: 'http://localhost:3000/c',
} as const;

/**
 * The demo data of the local fixtures: stripe-mock's fixture customer and product ids (every
 * invoice stripe-mock returns names that customer, every checkout session's line item that product).
 */
export const demoData = {
  client: { number: 1, name: 'Demo Fitness', phoneNumber: '+15550000001', providerCustomerId: 'cus_QXg1o8vcGmoR32' },
  plan: { name: 'Gold', description: 'All classes', providerProductId: 'prod_QXg1hqf4jFNsqG' },
  subscribers: [
    { phoneNumber: '+15550000002', locale: 'de' },
    { phoneNumber: '+15550000003', locale: 'fr' },
  ],
} as const;

/** The Service that announces a subgraph fixture to the graph controller of `make up`. */
export function subgraphService(name: string, port: number): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: `${name}-graphql`,
      namespace: localKube.namespace,
      labels: { 'app.kubernetes.io/name': name, 'app.kubernetes.io/part-of': 'subscription-platform' },
      annotations: { 'graph-registry.io/name': name, 'graph-registry.io/federation': 'true', 'graph-registry.io/url': `http://127.0.0.1:${port}/graphql` },
    },
    spec: { type: 'ClusterIP', selector: { 'app.kubernetes.io/name': name }, ports: [{ name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' }] },
  };
}

/** The values above as `NAME=value` lines (shell-safe: none needs quoting). */
export function shellAssignments(): string {
  const entries: Array<[string, string | number]> = [
    ['LOCAL_CACHE_PORT', localPorts.cache],
    ['LOCAL_CACHE_MANAGEMENT_PORT', localPorts.cacheManagement],
    ['LOCAL_CACHE_CAPACITY', localCacheSizing.capacity],
    ['LOCAL_CACHE_PARTITIONS', localCacheSizing.partitions],
    ['LOCAL_REGISTRY_PORT', localPorts.graphRegistry],
    ['LOCAL_REGISTRY_MANAGEMENT_PORT', localPorts.graphRegistryManagement],
    ['LOCAL_AUTH_PORT', localPorts.auth],
    ['LOCAL_AUTH_MANAGEMENT_PORT', localPorts.authManagement],
    ['LOCAL_WEBHOOKS_PORT', localPorts.webhooks],
    ['LOCAL_WEBHOOKS_MANAGEMENT_PORT', localPorts.webhooksManagement],
    ['LOCAL_CONTROLLER_MANAGEMENT_PORT', localPorts.graphControllerManagement],
    ['LOCAL_KUBE_NAMESPACE', localKube.namespace],
    ['LOCAL_GATEWAY_PORT', localPorts.gateway],
    ['LOCAL_GATEWAY_POLLING', `${localFederation.gatewayPollSeconds}s`],
    ['LOCAL_CDN_TARGET', localFederation.cdnTarget],
    ['LOCAL_REGISTRY_CDN_KEY', localSecrets.registryCdnKey],
    ['LOCAL_SUBGRAPH_PORTS', Object.values(localFederation.subgraphs).join(',')],
    ['LOCAL_LOCALIZATION_PORT', localPorts.localization],
    ['LOCAL_AUTH_URL', localUrls.auth],
    ['LOCAL_WEBHOOKS_PUBLIC_URL', localUrls.webhooksPublic],
    ['LOCAL_REGISTRY_KEY', localSecrets.registryApiKey],
    ['LOCAL_WEBHOOKS_KEY', localSecrets.webhooksApiKey],
    ['LOCAL_STRIPE_WEBHOOK_SECRET', localSecrets.stripeWebhookSecret],
    ['LOCAL_STRIPE_API_KEY', localSecrets.stripeApiKey],
    ['LOCAL_TWILIO_TOKEN', localSecrets.twilioAuthToken],
    ['LOCAL_TWILIO_ACCOUNT_SID', localSecrets.twilioAccountSid],
    ['LOCAL_ACCOUNT_URL', localUrls.account],
    ['LOCAL_BILLING_PORTAL_URL', localUrls.billingPortal],
    ['LOCAL_CLIENT_BASE_URL', localUrls.clientBase],
  ];
  return entries.map(([name, value]) => `${name}=${value}\n`).join('');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(shellAssignments());
}
