// `make demo`: a short scripted walk through the platform that `make up` runs, printing each step
// as it goes (what it did, what it saw; secrets redacted). The same journey the end-to-end suite
// asserts on (test/e2e/journey.ts), then a subgraph reaching Hive Gateway once its Service is
// annotated (scripts/demo-federation.ts). Exits 1 when any step fails.
import { randomInt, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_TOPICS, journeySteps, runJourney, type JourneyPlan, type JourneyReporter, type JourneyTargets } from '../test/e2e/journey.js';
import { sharedKeycloakAdmin } from '../test/e2e/journey-support.js';
import { infra } from '../test/support/infra.js';
import { showSubgraphArriving } from './demo-federation.js';
import { demoData, localKube, localPorts, localSecrets, localUrls } from './local-platform.js';

// kafkajs 2 schedules negative timeouts on Node 22+, which Node warns about; nothing is wrong.
process.removeAllListeners('warning');
process.on('warning', (warning) => {
  if (warning.name !== 'TimeoutNegativeWarning') process.stderr.write(`${warning.name}: ${warning.message}\n`);
});

const out = (line = ''): void => void process.stdout.write(`${line}\n`);

/** What must answer before the journey can run: each service's /readyz, and the fixtures. */
const preflight: Array<{ name: string; url: string; readyz: boolean }> = [
  { name: 'cache', url: `http://127.0.0.1:${localPorts.cacheManagement}/readyz`, readyz: true },
  { name: 'graph-registry', url: `http://127.0.0.1:${localPorts.graphRegistryManagement}/readyz`, readyz: true },
  { name: 'auth', url: `http://127.0.0.1:${localPorts.authManagement}/readyz`, readyz: true },
  { name: 'webhooks', url: `http://127.0.0.1:${localPorts.webhooksManagement}/readyz`, readyz: true },
  { name: 'graph-controller', url: `http://127.0.0.1:${localPorts.graphControllerManagement}/readyz`, readyz: true },
  { name: 'gateway (Hive Gateway)', url: localUrls.gatewayReadiness, readyz: true },
  { name: 'subgraph fixtures', url: localUrls.subgraphOperations, readyz: false },
  { name: 'localization fixture', url: localUrls.localization, readyz: false },
];

/** The components that do not answer as they should (a fixture answering anything is up). */
async function notReady(): Promise<string[]> {
  const results = await Promise.all(
    preflight.map(async ({ name, url, readyz }) => {
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(3000) });
        const text = await response.text();
        return readyz && response.status !== 200 ? `${name}: ${url} answered ${response.status} ${text.slice(0, 200)}` : undefined;
      } catch (err) {
        return `${name}: ${url} does not answer (${(err as Error).message})`;
      }
    }),
  );
  return results.filter((problem): problem is string => problem !== undefined);
}

/**
 * Where `make up` runs: the fixed local addresses, plus the dependencies' addresses of
 * .cache/run/infra.env. The auth service's certificate is verified against the local CA Keycloak
 * trusts (test/infra/local-ca.sh), and Keycloak's client of it posts back-channel Logout Tokens
 * to https://localhost:5555 (test/infra/keycloak/realm.json): the journey ends with a sign-out.
 */
function targets(): JourneyTargets {
  return {
    auth: { url: localUrls.auth, ca: readFileSync(infra('KEYCLOAK_TRUSTED_CA'), 'utf8') },
    registry: { url: localUrls.graphRegistry, apiKey: localSecrets.registryApiKey },
    webhooks: {
      url: localUrls.webhooks,
      publicBaseUrl: localUrls.webhooksPublic,
      apiKey: localSecrets.webhooksApiKey,
      stripeWebhookSecret: localSecrets.stripeWebhookSecret,
      twilioAuthToken: localSecrets.twilioAuthToken,
      twilioAccountSid: localSecrets.twilioAccountSid,
    },
    stripe: { apiUrl: infra('STRIPE_MOCK_URL'), apiKey: localSecrets.stripeApiKey },
    kafka: { brokers: infra('KAFKA_BROKERS').split(','), topics: DEFAULT_TOPICS },
    keycloak: sharedKeycloakAdmin(),
    backchannelLogout: true,
  };
}

function plan(): JourneyPlan {
  const run = randomUUID().slice(0, 8);
  return {
    // A fresh valid mobile number each run (libphonenumber refuses 555 numbers; a number gets 5 codes an hour).
    phoneNumber: `+49151${randomInt(10_000_000, 100_000_000)}`,
    graph: {
      name: 'demo-gateway',
      url: localUrls.gateway,
      // The run in a comment: each `make demo` publishes a new schema version (201), a second run too.
      schema: `# make demo ${run}\n${readFileSync(fileURLToPath(new URL('../services/webhooks/contract/gateway.graphql', import.meta.url)), 'utf8')}`,
    },
    client: demoData.client,
    subscribers: demoData.subscribers,
    announcement: `Demo Fitness: yoga moves to 7 pm on Friday (demo ${run})`,
  };
}

/** Where the subgraph fixtures show the operations they received (through Hive Gateway). */
const operationsUrl = new URL(localUrls.subgraphOperations);

interface OperationsView {
  last: number;
  operations: Array<{ seq: number; fields: string[]; variables: Record<string, unknown>; failed: boolean }>;
}

async function operations(query: string): Promise<OperationsView> {
  const response = await fetch(`${operationsUrl.href}${query}`, { signal: AbortSignal.timeout(3000) });
  if (!response.ok) throw new Error(`${operationsUrl.href} answered ${response.status}`);
  return (await response.json()) as OperationsView;
}

/** One line per mutation: its root field and its variables, as the subgraphs received them. */
async function printChanges(since: number): Promise<void> {
  const { operations: mutations } = await operations(`?since=${since}&type=mutation`);
  out(`
What the webhooks changed through Hive Gateway in the subgraphs (${mutations.length} mutations; all of them: curl ${operationsUrl.href}):`);
  for (const mutation of mutations) out(`    ${mutation.failed ? '✘ ' : ''}${mutation.fields.join(', ')} ${JSON.stringify(mutation.variables)}`);
}

/** What the graph controller registered from the example annotated Service that `make up` applies. */
async function printControllerGraph(): Promise<void> {
  const { exampleGraph, namespace } = localKube;
  const response = await fetch(`${localUrls.graphRegistry}/${exampleGraph}`, { headers: { 'x-api-key': localSecrets.registryApiKey }, signal: AbortSignal.timeout(3000) });
  const text = await response.text();
  out(
    response.status === 200
      ? `\nThe graph controller registered ${exampleGraph} → ${text} (from the annotated Service ${namespace}/orders-graphql).`
      : `\nThe graph controller has not registered ${exampleGraph} (GET /${exampleGraph} answered ${response.status}); see .cache/run/graph-controller.log.`,
  );
}

const reporter: JourneyReporter = {
  start: (step, total, title) => out(`\n${step}/${total} ${title}`),
  saw: (line) => out(`    ${line}`),
  done: (_step, elapsedMs) => out(`    ✔ done in ${elapsedMs} ms`),
  failed: (_step, error) => out(`    ✘ FAILED: ${error.message}`),
};

async function main(): Promise<number> {
  out('make demo: a walk through the platform of `make up`');
  out(`  auth ${localUrls.auth} · graph registry ${localUrls.graphRegistry} · webhooks ${localUrls.webhooks} · Hive Gateway ${localUrls.gateway}`);
  let journeyTargets: JourneyTargets;
  try {
    journeyTargets = targets();
  } catch (err) {
    out(`\nThe local dependencies are not running (${(err as Error).message}). Start the platform with \`make up\`, then run \`make demo\` again.`);
    return 1;
  }
  const problems = await notReady();
  if (problems.length > 0) {
    out('\nThe platform is not (fully) running:');
    for (const problem of problems) out(`  - ${problem}`);
    out('Start it with `make up` (logs: .cache/run/<name>.log), then run `make demo` again.');
    return 1;
  }
  const started = Date.now();
  const before = (await operations('')).last;
  const record = await runJourney(journeyTargets, plan(), reporter);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  await printChanges(before).catch((err: unknown) => out(`\nThe subgraph fixtures' operations could not be read: ${(err as Error).message}`));
  await printControllerGraph().catch((err: unknown) => out(`\nThe graph registry could not be asked for the controller's graph: ${(err as Error).message}`));
  out('\nFederation: a subgraph reaches Hive Gateway when its Service is annotated, with nothing restarted');
  const federated = await showSubgraphArriving((line) => out(`    ${line}`)).catch((err: unknown) => {
    out(`    ✘ FAILED: ${(err as Error).message}`);
    return false;
  });
  const total = journeySteps(journeyTargets);
  if (record.failures.length === 0 && federated) {
    out(`\nDemo complete: ${total} of ${total} steps passed in ${seconds} s, and the subgraph came and went through the gateway.`);
    return 0;
  }
  if (!federated) out('\nDemo FAILED: the review subgraph did not come and go through Hive Gateway (logs: .cache/run/graph-controller.log, .cache/run/gateway.log).');
  if (record.failures.length === 0) return 1;
  out(`\nDemo FAILED: ${record.failures.map(({ step, title }) => `step ${step} (${title})`).join(', ')}; ${total - record.failures.length} of ${total} passed in ${seconds} s.`);
  out('Service logs: .cache/run/<name>.log');
  return 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    out(`\nDemo FAILED: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
