// What the subgraph fixtures' Pod runs (test/cluster/support/subgraphs.ts bundles this file and
// mounts it beside the SDLs it reads): the user, product and payment subgraph fixtures of the
// end-to-end suites on one set of records seeded with `make up`'s demo data, listening on every
// address of the Pod at SUBGRAPH_PORTS (user,product,payment), checking the bearer tokens of
// KEYCLOAK_URL's realm (infra() reads KEYCLOAK_REALM and KEYCLOAK_SERVICES_CLIENT_ID from the
// environment). Prints one JSON line when ready: the seeded client.
import { seedDemoData, startSubgraphFixtures, SUBGRAPH_NAMES } from '../../support/subgraph-fixtures.js';
import { infra } from '../../support/infra.js';

const ports = infra('SUBGRAPH_PORTS').split(',').map(Number);
const fixtures = await startSubgraphFixtures({
  host: '0.0.0.0',
  ports: Object.fromEntries(SUBGRAPH_NAMES.map((name, i) => [name, ports[i]!])),
  keycloakUrl: infra('KEYCLOAK_URL'),
  keepOperations: 1000,
});
const client = seedDemoData(fixtures);
process.stdout.write(`${JSON.stringify({ client })}\n`);
process.once('SIGTERM', () => void fixtures.close().then(() => process.exit(0)));
