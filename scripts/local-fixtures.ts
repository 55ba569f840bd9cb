// `make up`: the stand-ins for the platform's collaborators that this project does not build —
// the GraphQL gateway and the localization service — with demo data, on fixed local ports.
// The same fixtures the tests use (test/support); run with tsx. Prints one JSON line when ready.
import { startGraphqlGateway } from '../test/support/graphql-gateway.js';
import { startLocalizationService } from '../test/support/localization-service.js';

/** The demo data `make demo` walks through; stripe-mock's fixture customer and product ids. */
export const demo = {
  client: { number: 1, name: 'Demo Fitness', phoneNumber: '+15550000001', providerCustomerId: 'cus_QXg1o8vcGmoR32' },
  plan: { name: 'Gold', description: 'All classes', providerProductId: 'prod_QXg1hqf4jFNsqG' },
  subscribers: [
    { phoneNumber: '+15550000002', locale: 'de' },
    { phoneNumber: '+15550000003', locale: 'fr' },
  ],
};

const gateway = await startGraphqlGateway({ port: Number(process.env.LOCAL_GATEWAY_PORT ?? 4000) });
const localization = await startLocalizationService({ port: Number(process.env.LOCAL_LOCALIZATION_PORT ?? 4001) });
const client = gateway.addClient(demo.client);
gateway.addPlan({ ...demo.plan, active: true });
for (const subscriber of demo.subscribers) gateway.addSubscriber(client.id, subscriber.phoneNumber, subscriber.locale);

process.stdout.write(`${JSON.stringify({ gatewayUrl: gateway.url, localizationUrl: localization.url })}\n`);
const stop = (): void => void Promise.all([gateway.close(), localization.close()]).then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
