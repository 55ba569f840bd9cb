// Hive Gateway's configuration as the platform runs it (make up, the tests, and the chart, which
// mounts the same settings from a ConfigMap). Everything else comes from the command line and the
// environment of the `hive-gateway supergraph` command:
//   HIVE_CDN_ENDPOINT  the graph registry's CDN path, http://<registry>:5145/artifacts/v1/<Registry__CdnTarget>
//   HIVE_CDN_KEY       one of the registry's read-only Registry__CdnKeys
//   POLLING            how often the supergraph is fetched again (e.g. 10s); a 304 costs the registry one read
//   PORT               the GraphQL endpoint's port (/graphql), with /healthcheck and /readiness beside it
import { defineConfig } from '@graphql-hive/gateway';

export const gatewayConfig = defineConfig({
  // The caller's bearer token (the webhooks service's Keycloak token) goes on to the subgraphs,
  // which authorize the call themselves.
  propagateHeaders: {
    fromClientToSubgraphs: ({ request }) => ({ authorization: request.headers.get('authorization') }),
  },
});
