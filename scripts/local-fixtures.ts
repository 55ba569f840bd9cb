// `make up`: the stand-ins for the platform's collaborators that this project does not build —
// the GraphQL gateway and the localization service — with the demo data, on the fixed local
// ports (scripts/local-platform.ts). The same fixtures the tests use; run with tsx. Prints one
// JSON line when ready.
import { startGraphqlGateway } from '../test/support/graphql-gateway.js';
import { startLocalizationService } from '../test/support/localization-service.js';
import { demoData, localPorts } from './local-platform.js';

// Keeps the last 1000 operations for `GET /_operations` (make demo prints what the webhooks changed).
const gateway = await startGraphqlGateway({ port: localPorts.gateway, keepOperations: 1000 });
const localization = await startLocalizationService({ port: localPorts.localization });
const client = gateway.addClient(demoData.client);
gateway.addPlan({ ...demoData.plan, active: true });
for (const subscriber of demoData.subscribers) gateway.addSubscriber(client.id, subscriber.phoneNumber, subscriber.locale);

process.stdout.write(`${JSON.stringify({ gatewayUrl: gateway.url, localizationUrl: localization.url })}\n`);
const stop = (): void => void Promise.all([gateway.close(), localization.close()]).then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
