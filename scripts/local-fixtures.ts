// `make up`: the stand-ins for the platform's collaborators that this project does not build —
// the specification's user, product and payment services as three Apollo Federation subgraphs,
// a fourth (review) that `make demo` announces, and the localization service — with the demo
// data, on the fixed local ports (scripts/local-platform.ts). The same fixtures the tests use; run
// with tsx. Hive Gateway, not a fixture, serves them once the graph registry composed them.
// Prints one JSON line when ready.
import { startLocalizationService } from '../test/support/localization-service.js';
import { seedDemoData, startReviewSubgraph, startSubgraphFixtures } from '../test/support/subgraph-fixtures.js';
import { localFederation, localPorts } from './local-platform.js';

// Keeps the last 1000 operations for `GET /_operations` on any subgraph's port (make demo prints what the webhooks changed).
const subgraphs = await startSubgraphFixtures({ ports: localFederation.subgraphs, keepOperations: 1000 });
const review = await startReviewSubgraph(subgraphs.data, localFederation.demoSubgraph.port);
const localization = await startLocalizationService({ port: localPorts.localization });
seedDemoData(subgraphs);

const urls = Object.fromEntries([...Object.values(subgraphs.servers), review].map((server) => [server.name, server.url]));
process.stdout.write(`${JSON.stringify({ subgraphs: urls, localizationUrl: localization.url })}\n`);
const stop = (): void => void Promise.all([subgraphs.close(), review.close(), localization.close()]).then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
