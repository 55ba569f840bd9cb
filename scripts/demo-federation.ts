// `make demo`'s federation part: a subgraph reaching Hive Gateway once its Service is annotated,
// and leaving it once the Service is gone, with nothing restarted. The review subgraph fixture
// (scripts/local-fixtures.ts) runs from `make up` on; only its Service is missing until here.
import { CoreV1Api, type V1Service } from '@kubernetes/client-node';
import { servicesToken } from '../test/support/hive-gateway.js';
import { adminKubeConfig } from '../test/support/kube-apiserver.js';
import { demoData, localFederation, localKube, localSecrets, localUrls, subgraphService } from './local-platform.js';

/** Hive Gateway polls every 10 s; the controller reads a new Service's SDL at once. */
const WITHIN_MS = localFederation.gatewayPollSeconds * 1000 + 15_000;
const RATED = `{ planByProviderProductId(providerProductId: "${demoData.plan.providerProductId}") { name rating } }`;

type Say = (line: string) => void;

let bearer: string | undefined;

async function rating(): Promise<{ rating?: number; error?: string }> {
  bearer ??= await servicesToken();
  const response = await fetch(localUrls.gateway, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${bearer}` },
    body: JSON.stringify({ query: RATED }),
    signal: AbortSignal.timeout(3000),
  });
  const body = (await response.json()) as { data?: { planByProviderProductId?: { rating?: number } | null } | null; errors?: Array<{ message: string }> };
  const value = body.data?.planByProviderProductId?.rating;
  return value === undefined ? { error: body.errors?.[0]?.message ?? `status ${response.status}` } : { rating: value };
}

/** Polls until `done` holds for the answer; how long it took, or undefined past WITHIN_MS. */
async function until(done: (answer: Awaited<ReturnType<typeof rating>>) => boolean): Promise<number | undefined> {
  const started = Date.now();
  while (Date.now() - started < WITHIN_MS) {
    if (done(await rating().catch((err: unknown) => ({ error: (err as Error).message })))) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return undefined;
}

async function supergraphVersion(): Promise<string> {
  const response = await fetch(`${localUrls.graphRegistry}/supergraph/versions?limit=1`, { headers: { 'x-api-key': localSecrets.registryApiKey }, signal: AbortSignal.timeout(3000) });
  const body = (await response.json()) as { versions?: Array<{ version: number; subgraphs: Array<{ name: string }> }> };
  const latest = body.versions?.[0];
  return latest === undefined ? 'none' : `version ${latest.version} of ${latest.subgraphs.map((subgraph) => subgraph.name).join(', ')}`;
}

/**
 * Annotates a Service for the review subgraph, waits for its `Plan.rating` to answer through the
 * gateway, deletes the Service and waits for the field to go. True when both happened in time.
 */
export async function showSubgraphArriving(say: Say): Promise<boolean> {
  const { name, port } = localFederation.demoSubgraph;
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const body = subgraphService(name, port) as V1Service;
  const serviceName = body.metadata!.name!;
  const namespace = localKube.namespace;
  // A Service left by an interrupted demo is replaced, so the arrival is this run's.
  await core.deleteNamespacedService({ name: serviceName, namespace }).catch(() => undefined);
  await until((answer) => answer.rating === undefined);
  say(`before: ${RATED} → "${(await rating()).error}"; supergraph ${await supergraphVersion()}`);
  await core.createNamespacedService({ namespace, body });
  say(`Service ${namespace}/${serviceName} created, annotated graph-registry.io/federation: "true" and graph-registry.io/url: http://127.0.0.1:${port}/graphql`);
  const arrived = await until((answer) => answer.rating !== undefined);
  if (arrived === undefined) {
    say(`✘ Plan.rating did not reach the gateway within ${WITHIN_MS / 1000} s (logs: .cache/run/graph-controller.log, .cache/run/gateway.log)`);
    await core.deleteNamespacedService({ name: serviceName, namespace }).catch(() => undefined);
    return false;
  }
  say(`after ${(arrived / 1000).toFixed(1)} s the gateway answers rating ${(await rating()).rating} (the controller published the SDL, the registry composed ${await supergraphVersion()}, the gateway polled it)`);
  await core.deleteNamespacedService({ name: serviceName, namespace });
  const gone = await until((answer) => answer.rating === undefined);
  say(
    gone === undefined
      ? `✘ Plan.rating was still served ${WITHIN_MS / 1000} s after the Service was deleted`
      : `Service deleted: ${(gone / 1000).toFixed(1)} s later the field is gone again (supergraph ${await supergraphVersion()}); the gateway was never restarted`,
  );
  return gone !== undefined;
}
