// An upgrade of a running installation with live data in it, on the single-node cluster: the
// previous release (release/previous; its images and chart built from that commit of this clone by
// scripts/release/previous.sh, cached per machine) installed as docs/deployment.md says, with the
// state an installation has — an OTP session and an OIDC session at auth, graphs and schema
// versions in the registry, Stripe events in the webhooks' event log, an announcement drafted and
// not yet confirmed — then `helm upgrade` to this version, as `make release` pushed it to a
// registry (oci://…, --version; the node pulls its images from there), while clients in the
// cluster keep asking (the sessions at auth, the cache's health): no request and no probe fails
// during the rollout, and everything is still there and still works after it, `helm test`
// included. Then `helm rollback` to the previous release, and the same checks. Last, the release
// uninstalled and this version installed again from the registry by version, with `helm test`.
// The platform's state lives in Redis (the cache's entries, auth's sessions among them; the
// registry; the webhooks' log and drafts), as in an installation that is upgraded in place.
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { demoData } from '../../scripts/local-platform.js';
import { signInWithKeycloakForm } from '../support/keycloak-form-login.js';
import { runJourney, smsToWebhooks, type JourneyPlan, type JourneyRecord, type JourneyTargets } from '../e2e/journey.js';
import { http, httpsClient, keycloakCreateUser, keycloakDeleteUser } from '../e2e/journey-support.js';
import { eventually, sleep } from '../support/eventually.js';
import { gatewayContractSdl } from '../support/graphql-gateway.js';
import { repoRoot } from '../deploy/support/service-config.js';
import { clusterSh, infraSh } from './support/cluster.js';
import { releaseIntoLocalRegistry, type ReleaseRegistry } from './support/release-registry.js';
import {
  ALLOWED_REDIRECT,
  CACHE_CLIENT,
  COMPONENTS,
  enterClusterTier,
  leaveClusterTier,
  chartTestsNotPassed,
  persistentStores,
  ready,
  RELEASE,
  startClusterPlatform,
  TIER_TIMEOUT_MS,
  type ClusterPlatform,
  type ClusterTier,
  type ImageSource,
  type Pod,
} from './support/platform.js';

const namespace = `sp-upgrade-${randomUUID().slice(0, 8)}`;
const run = randomUUID().slice(0, 8);
const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
const plan: JourneyPlan = {
  phoneNumber: `+49151${randomInt(10_000_000, 100_000_000)}`,
  graph: { name: `upgrade-${run}`, url: 'http://graphql.sp-e2e.test/graphql', schema: `# the upgrade run ${run}, version 1\n${gatewayContractSdl}` },
  client: demoData.client,
  subscribers: demoData.subscribers,
  announcement: `Demo Fitness: the upgrade run ${run} is live`,
};
const oidcUser = { username: `upgrade-${run}`, password: randomBytes(12).toString('base64url'), phoneNumber: `+49152${randomInt(10_000_000, 100_000_000)}` };
/** Labels of the pod asking auth with the sessions' cookies (auth's NetworkPolicy lets it in, below). */
const SESSION_CLIENT = { 'sp-e2e/session-client': 'true' };
const CACHE_PROBE = 'cache-probe';
const SESSION_PROBE = 'session-probe';
const ROLLOUT_TIMEOUT = '300s';

/** The previous release as scripts/release/previous.sh built it: its chart, and each service's image archive and tag. */
interface PreviousRelease {
  version: string;
  chart: string;
  archives: string[];
  tags: Record<string, string>;
}

async function buildPreviousRelease(): Promise<PreviousRelease> {
  const built = await infraSh(join(repoRoot, 'scripts/release/previous.sh'), [], 5_400_000);
  if (built.code !== 0) throw new Error(`scripts/release/previous.sh failed:\n${built.stderr.split('\n').slice(-30).join('\n')}`);
  const dir = built.stdout.trim().split('\n').pop()!;
  const previousVersion = /^version=(.+)$/m.exec(readFileSync(join(repoRoot, 'release/previous'), 'utf8'))![1]!;
  const images = Object.fromEntries(
    readFileSync(join(dir, 'images.env'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  return {
    version: previousVersion,
    chart: join(dir, `subscription-platform-${previousVersion}.tgz`),
    archives: COMPONENTS.map((service) => join(dir, `${service}.tar`)),
    tags: Object.fromEntries(COMPONENTS.map((service) => [service, images[service]!.slice(images[service]!.lastIndexOf(':') + 1)])),
  };
}

let scratch: string;
let tier: ClusterTier | undefined;
let platform: ClusterPlatform | undefined;
let previous: PreviousRelease;
let registry: ReleaseRegistry | undefined;
let oidcUserId: string | undefined;

/** The state made through the previous release, and what each check compares with. */
interface LiveState {
  journey: JourneyRecord;
  sessions: { otp: string; oidc: string };
  graphs: Record<string, string>;
  schema: string;
  events: LoggedEvent[];
  /** The text of the announcement drafted and not yet confirmed. */
  draft: string;
}
let live: LiveState;

const values = (images: ImageSource): string =>
  platform!.values(
    {
      ...persistentStores(platform!),
      auth: {
        // Keycloak's platform-auth client (test/infra/keycloak/realm.json) sends browsers back only
        // to https://127.0.0.1:* (it refuses the suite's made-up host with 400): the OIDC login's
        // redirect goes there, and oidcLogin hands its path and query to the forward.
        publicBaseUrl: 'https://127.0.0.1:5555',
        networkPolicy: { extraIngressFrom: [{ podSelector: { matchLabels: SESSION_CLIENT } }] },
      },
      webhooks: { adminApi: { existingSecretKey: 'WEBHOOKS_ADMIN_API_KEY' } },
    },
    images,
  );

/** This version from the registry `make release` pushed it to: `helm ACTION` of the chart by version, the images pulled from there. */
const fromRegistry = (action: 'upgrade' | 'install'): Promise<string> =>
  platform!.helm([action, RELEASE, registry!.chart, '--version', version, '--plain-http', '-n', namespace, '-f', values({ registry: registry!.address }), '--wait', '--timeout', ROLLOUT_TIMEOUT]);

/** A browser's OIDC login through auth (login, Keycloak's own form, back to /redirect): the TokenId cookie's value. */
async function oidcLogin(auth: JourneyTargets['auth']): Promise<string> {
  const client = httpsClient(auth.url, auth.ca);
  try {
    const started = await client.request(`/login?${new URLSearchParams({ redirectUri: ALLOWED_REDIRECT }).toString()}`);
    if (started.status !== 302) throw new Error(`GET /login answered ${started.status}: ${started.text}`);
    const binding = started.cookies[0]!.split(';')[0]!;
    const back = await signInWithKeycloakForm(started.headers.get('location')!, oidcUser.username, oidcUser.password);
    const finished = await client.request(`${back.pathname}${back.search}`, { headers: { cookie: binding } });
    const tokenId = finished.cookies.find((cookie) => cookie.startsWith('TokenId='));
    if (finished.status !== 302 || tokenId === undefined) throw new Error(`GET /redirect answered ${finished.status} without a TokenId cookie: ${finished.text}`);
    return tokenId.slice('TokenId='.length, tokenId.indexOf(';'));
  } finally {
    await client.close();
  }
}

/** GET /auth with each session's cookie, through a fresh forward: the statuses. */
async function sessionStatuses(targets: JourneyTargets): Promise<{ otp: number; oidc: number }> {
  const client = httpsClient(targets.auth.url, targets.auth.ca);
  try {
    const ask = async (cookie: string): Promise<number> => (await client.request('/auth', { headers: { cookie: `TokenId=${cookie}` } })).status;
    return { otp: await ask(live.sessions.otp), oidc: await ask(live.sessions.oidc) };
  } finally {
    await client.close();
  }
}

async function registrySchema(targets: JourneyTargets): Promise<string> {
  return (await http(`${targets.registry.url}/schema`, { headers: { 'x-api-key': targets.registry.apiKey } })).text;
}

/** An event of the webhooks' log as GET /api/events lists it (services/webhooks/src/events/event-log.ts): what the checks read of it, and the rest. */
interface LoggedEvent {
  id: string;
  deliveries: number;
  lastSeen: string;
  [field: string]: unknown;
}

/**
 * The log's events as they were, or with more attempts since: each event still there, in the same
 * order, every field as it was but `deliveries` (never fewer) and `lastSeen` (never earlier); none
 * added. A new webhooks pod sweeps the provider's events at once (reconcile-sweeper.ts: the first
 * sweep at start, listing since the stored cursor less the overlap; stripe-mock lists its fixture
 * event whatever the cursor), and the log counts that attempt of an event it already holds.
 */
function expectEventsKept(now: readonly LoggedEvent[], before: readonly LoggedEvent[]): void {
  const fixed = (events: readonly LoggedEvent[]) => events.map(({ deliveries: _deliveries, lastSeen: _lastSeen, ...rest }) => rest);
  expect(fixed(now)).toEqual(fixed(before));
  const went = now.flatMap((event, i) => (event.deliveries < before[i]!.deliveries || Date.parse(event.lastSeen) < Date.parse(before[i]!.lastSeen) ? [event.id] : []));
  expect(went).toEqual([]);
}

/** The webhooks' event log as the admin API lists it (newest first). */
async function eventLog(targets: JourneyTargets): Promise<LoggedEvent[]> {
  const answer = await http(`${targets.webhooks.url}/api/events?limit=100`, { headers: { 'x-api-key': platform!.secrets.webhooksAdminApiKey } });
  if (answer.status !== 200) throw new Error(`GET /api/events answered ${answer.status}: ${answer.text}`);
  return (JSON.parse(answer.text) as { events: LoggedEvent[] }).events;
}

/** The forwards opened again (the pods they reached are gone after a rollout) and what the services hold now. */
async function stateNow(): Promise<{ targets: JourneyTargets; sessions: { otp: number; oidc: number }; graphs: Record<string, string>; schema: string; events: LoggedEvent[] }> {
  await platform!.closeForwards();
  const targets = await platform!.journeyTargets();
  return { targets, sessions: await sessionStatuses(targets), graphs: await platform!.registryGraphs(), schema: await registrySchema(targets), events: await eventLog(targets) };
}

/** The probes' counts (in-cluster clients of the cache and of auth with the sessions). */
async function probes(): Promise<{ cache: { ok: number; failed: string[] }; sessions: { ok: number; failed: string[] } }> {
  return { cache: await platform!.probeCounts(CACHE_PROBE), sessions: await platform!.probeCounts(SESSION_PROBE) };
}

interface KubeEvent {
  reason: string;
  message: string;
  involvedObject: { name: string };
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  eventTime?: string | null;
  metadata: { creationTimestamp: string };
}

interface PodStatuses {
  metadata: { name: string; creationTimestamp: string };
  status: { containerStatuses?: Array<{ name: string; restartCount: number }> };
}

/** When an event last happened (`first`: first happened); an event without any time counts as recent (never dropped). */
const eventTime = (event: KubeEvent, first = false): number =>
  Date.parse((first ? event.firstTimestamp : event.lastTimestamp) ?? event.eventTime ?? event.metadata.creationTimestamp) || Number.POSITIVE_INFINITY;

const eventsSince = async (since: number): Promise<KubeEvent[]> =>
  (await platform!.cluster.json<{ items: KubeEvent[] }>(['-n', namespace, 'get', 'events'])).items.filter((event) => eventTime(event) >= since - 1000);

/**
 * Kubelet probe failures in the namespace since `since`: every failed liveness probe, every failed
 * readiness probe of a pod in service (Ready once, and not being stopped), every container the
 * kubelet killed for a failed probe or restarted (a startup or liveness probe past its
 * failureThreshold), and a startup probe failing on a pod that was there before the roll.
 * `firstReady`: when each pod was first seen Ready (polled through the roll).
 * Three kinds of Unhealthy events are the probes doing what they are for, not failures:
 * - a pod the roll created failing its startup probe while its process starts: until the probe
 *   passes the kubelet runs no other probe and the pod takes no traffic; it is restarted only
 *   past failureThreshold × periodSeconds (counted: restarts);
 * - a pod the roll created failing readiness before it was first Ready (the graph controller
 *   answers /readyz 503 until its informers have listed): it is not yet an endpoint, and the
 *   rollout waits for it before it stops the old pod — that wait is what the probe is for;
 * - a pod the roll is stopping (its "Stopping container" event first) failing readiness: its
 *   endpoint is already terminating, and every service turns /readyz to 503 and then closes its
 *   management port on SIGTERM (packages/http serve-service.ts) — the kubelet keeps running
 *   readiness probes during termination (liveness and startup it stops).
 */
async function probeFailuresSince(since: number, firstReady: ReadonlyMap<string, number>): Promise<string[]> {
  const events = await eventsSince(since);
  const pods = (await platform!.cluster.json<{ items: PodStatuses[] }>(['-n', namespace, 'get', 'pods'])).items;
  const created = new Map(pods.map((pod) => [pod.metadata.name, Date.parse(pod.metadata.creationTimestamp)]));
  const startingPod = (name: string): boolean => (created.get(name) ?? Number.NEGATIVE_INFINITY) >= since - 1000;
  const stopping = new Map(events.filter((event) => event.reason === 'Killing' && event.message.startsWith('Stopping container')).map((event) => [event.involvedObject.name, eventTime(event, true)]));
  const stoppingPod = (event: KubeEvent): boolean => eventTime(event, true) >= (stopping.get(event.involvedObject.name) ?? Number.POSITIVE_INFINITY);
  // Event times are whole seconds, rounded down: a failure in the second the pod was first seen Ready came before it.
  const notYetReady = (event: KubeEvent): boolean => startingPod(event.involvedObject.name) && eventTime(event) <= (firstReady.get(event.involvedObject.name) ?? Number.NEGATIVE_INFINITY);
  const expected = (event: KubeEvent): boolean =>
    (event.message.startsWith('Startup probe failed') && startingPod(event.involvedObject.name)) ||
    (event.message.startsWith('Readiness probe failed') && (stoppingPod(event) || notYetReady(event)));
  const failed = events.filter((event) => event.reason === 'Unhealthy' && !expected(event)).map((event) => `${event.involvedObject.name}: ${event.message}`);
  const killed = events.filter((event) => event.reason === 'Killing' && /probe/i.test(event.message)).map((event) => `${event.involvedObject.name}: ${event.message}`);
  const restarted = pods.flatMap((pod) =>
    (pod.status.containerStatuses ?? []).filter((container) => container.restartCount > 0).map((container) => `${pod.metadata.name}: ${container.name} restarted ${container.restartCount} times`),
  );
  return [...failed, ...killed, ...restarted];
}

/** The namespace's events since `since`, oldest first, one line each with its times: what a failed roll is read against. */
async function timelineSince(since: number): Promise<string[]> {
  const iso = (time: number): string => (Number.isFinite(time) ? new Date(time).toISOString() : '?');
  return (await eventsSince(since))
    .sort((a, b) => eventTime(a, true) - eventTime(b, true))
    .map((event) => `${iso(eventTime(event, true))}…${iso(eventTime(event))} ${event.reason} ${event.involvedObject.name}: ${event.message}`);
}

/** Every component's pods Ready on the given tags, and no other pod of them left. */
async function rolledTo(tags: (service: string) => string): Promise<void> {
  await eventually(
    async () => {
      const pods = (await platform!.pods()).filter((pod: Pod) => (COMPONENTS as readonly string[]).includes(pod.metadata.labels?.['app.kubernetes.io/name'] ?? ''));
      const done = pods.every((pod) => ready(pod) && pod.spec.containers[0]!.image.endsWith(`:${tags(pod.metadata.labels!['app.kubernetes.io/name']!)}`));
      if (!done) await sleep(1000);
      return done && new Set(pods.map((pod) => pod.metadata.labels!['app.kubernetes.io/name'])).size === COMPONENTS.length;
    },
    180_000,
    'every component rolled',
  );
}

/** When each pod of the namespace is first seen Ready, polled twice a second until stopped. */
function watchFirstReady(): { firstReady: ReadonlyMap<string, number>; stop(): Promise<void> } {
  const firstReady = new Map<string, number>();
  let watching = true;
  const polling = (async () => {
    while (watching) {
      const now = Date.now();
      for (const pod of await platform!.pods().catch((): Pod[] => [])) if (ready(pod) && !firstReady.has(pod.metadata.name)) firstReady.set(pod.metadata.name, now);
      await sleep(500);
    }
  })();
  return {
    firstReady,
    stop: async () => {
      watching = false;
      await polling;
    },
  };
}

/**
 * A helm command that rolls the pods (upgrade or rollback) while the probes ask: no failed request
 * and no failed kubelet probe from its start until the old pods are gone and 20 more answers came.
 */
async function rollWhileProbing(roll: () => Promise<unknown>, tags: (service: string) => string): Promise<void> {
  let watch: ReturnType<typeof watchFirstReady> | undefined;
  // The probes run on the image the cache runs now, not the one built here by its local name:
  // after the node had pulled the same image from the registry under the release's name, pods
  // on the local name failed with ErrImageNeverPull (twice, containerd 1.6.20), though
  // `ctr images ls` still listed it.
  const image = await platform!.cluster.kubectl(['-n', namespace, 'get', `deploy/${RELEASE}-cache`, '-o', 'jsonpath={.spec.template.spec.containers[0].image}']);
  await platform!.startScriptPod(CACHE_PROBE, CACHE_CLIENT, 'grpc-health-probe.cjs', [], { ADDRESS: `${RELEASE}-cache:7777` }, image);
  await platform!.startScriptPod(SESSION_PROBE, SESSION_CLIENT, 'session-probe.cjs', [], { URL: `https://${RELEASE}-auth:5555/auth`, COOKIES: JSON.stringify([live.sessions.otp, live.sessions.oidc]) }, image);
  try {
    await eventually(async () => {
      const counts = await probes().catch(() => undefined);
      if (counts === undefined || counts.cache.ok === 0 || counts.sessions.ok === 0) await sleep(1000);
      return counts !== undefined && counts.cache.ok > 0 && counts.sessions.ok > 0;
    }, 60_000).catch(async (error: Error) => {
      // What the probes saw, and their pods: a probe that never started, or answers that failed.
      const seen = await probes().catch((failure: Error) => failure.message);
      const pods = await platform!.cluster.kubectl(['-n', namespace, 'get', 'pods', '-o', 'wide']).catch((failure: Error) => failure.message);
      throw new Error(`${error.message}: the probes before the roll: ${JSON.stringify(seen).slice(0, 2000)}\n${pods}`);
    });
    // Both probes answered before the roll: a failure from here on is the roll's.
    expect(await probes()).toEqual({ cache: expect.objectContaining({ failed: [] }), sessions: expect.objectContaining({ failed: [] }) });
    const since = Date.now();
    watch = watchFirstReady();
    await roll();
    await rolledTo(tags);
    const rolled = await probes();
    await eventually(async () => {
      const counts = await probes();
      if (counts.cache.ok <= rolled.cache.ok + 20 || counts.sessions.ok <= rolled.sessions.ok + 20) await sleep(1000);
      return counts.cache.ok > rolled.cache.ok + 20 && counts.sessions.ok > rolled.sessions.ok + 20;
    }, 60_000);
    const counts = await probes();
    const failures = { cache: counts.cache.failed, sessions: counts.sessions.failed, kubeletProbes: await probeFailuresSince(since, watch.firstReady) };
    // On a failure, the roll's events and the machine's load beside it, to tell what failed when.
    const context = Object.values(failures).some((list) => list.length > 0) ? { since: new Date(since).toISOString(), load: loadavg(), timeline: await timelineSince(since) } : {};
    expect({ ...failures, ...context }).toEqual({ cache: [], sessions: [], kubeletProbes: [] });
  } finally {
    await watch?.stop();
    await platform!.cluster.kubectl(['-n', namespace, 'delete', 'pod', CACHE_PROBE, SESSION_PROBE, '--ignore-not-found', '--wait']);
  }
}

/** The checks after a roll: every session, the registry, the event log as before, and the waiting draft CONFIRMed; the targets they used. */
async function expectStateKeptAndDraftConfirmed(): Promise<JourneyTargets> {
  const now = await stateNow();
  expect(now.sessions).toEqual({ otp: 200, oidc: 200 });
  expect(now.graphs).toEqual(live.graphs);
  expect(now.schema).toBe(live.schema);
  // The events logged before, as they were (the newest first; none added by the roll).
  expectEventsKept(now.events, live.events);
  const confirmed = await smsToWebhooks(now.targets.webhooks, plan.client.phoneNumber, 'CONFIRM');
  expect(confirmed.reply).toBe(`Your announcement was sent to ${plan.subscribers.length} subscribers.`);
  // The next draft, left for the next roll.
  live.draft = `${plan.announcement}, draft after the roll ${Date.now()}`;
  expect((await smsToWebhooks(now.targets.webhooks, plan.client.phoneNumber, live.draft)).reply).toMatch(/Text CONFIRM to send it/);
  return now.targets;
}

/** `helm list`'s line of the release: its chart (name-version) and app version. */
async function listed(): Promise<{ chart: string; app_version: string; status: string }> {
  const releases = JSON.parse(await platform!.helm(['list', '-n', namespace, '-o', 'json'])) as Array<{ name: string; chart: string; app_version: string; status: string }>;
  const release = releases.find((candidate) => candidate.name === RELEASE)!;
  return { chart: release.chart, app_version: release.app_version, status: release.status };
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'sp-upgrade-'));
  // Before the tier: another checkout's (or this run's cluster.test.ts) cluster runs meanwhile.
  previous = await buildPreviousRelease();
  registry = await releaseIntoLocalRegistry(scratch);
  tier = await enterClusterTier();
}, TIER_TIMEOUT_MS + 5_400_000);

afterAll(async () => {
  registry?.close();
  if (oidcUserId !== undefined) await keycloakDeleteUser(platform!.keycloak, oidcUserId).catch(() => undefined);
  await leaveClusterTier(platform, tier, scratch);
}, 120_000);

describe('an upgrade from the previous release with live state in it', () => {
  beforeAll(async () => {
    platform = await startClusterPlatform(scratch, namespace, 'fixture');
    const imported = await clusterSh(['import', ...previous.archives]);
    if (imported.code !== 0) throw new Error(`cluster.sh import failed: ${imported.stderr}`);
    await platform.helm(['install', RELEASE, previous.chart, '-n', namespace, '-f', values({ tags: previous.tags }), '--wait', '--timeout', ROLLOUT_TIMEOUT]);
    const targets = await platform.journeyTargets();
    const journey = await runJourney(targets, plan);
    oidcUserId = await keycloakCreateUser(platform.keycloak, oidcUser);
    const oidc = await oidcLogin(targets.auth);
    // A second schema version of the registry's graph.
    const schema = plan.graph.schema.replace('version 1', 'version 2');
    const stored = await http(`${targets.registry.url}/schema`, { method: 'POST', headers: { 'x-api-key': targets.registry.apiKey, 'content-type': 'application/graphql' }, body: schema });
    if (stored.status !== 201) throw new Error(`POST /schema (version 2) answered ${stored.status}: ${stored.text}`);
    const draft = `${plan.announcement}, drafted before the upgrade`;
    const drafted = await smsToWebhooks(targets.webhooks, plan.client.phoneNumber, draft);
    if (!/Text CONFIRM to send it/.test(drafted.reply)) throw new Error(`the draft's reply: ${drafted.reply}`);
    live = {
      journey,
      sessions: { otp: journey.login?.cookie.value ?? '', oidc },
      graphs: await platform.registryGraphs(),
      schema: await registrySchema(targets),
      events: await eventLog(targets),
      draft,
    };
  }, 900_000);

  it('should run the previous release and hold the live state made through it', async () => {
    expect(live.journey.failures.map(({ step, title, error }) => `${step}. ${title}: ${error.message}`)).toEqual([]);
    expect(await listed()).toEqual({ chart: `subscription-platform-${previous.version}`, app_version: previous.version, status: 'deployed' });
    expect((await stateNow()).sessions).toEqual({ otp: 200, oidc: 200 });
    expect(live.graphs[plan.graph.name]).toBe(plan.graph.url);
    expect(live.schema).toContain(`the upgrade run ${run}, version 2`);
    expect(live.events).toContainEqual(expect.objectContaining({ id: live.journey.payment?.eventId }));
  }, 120_000);

  it('should upgrade to this version from the registry while clients ask: no failed request, no probe failure', async () => {
    await rollWhileProbing(() => fromRegistry('upgrade'), () => version);
  }, 900_000);

  it('should keep every session, the registry and the event log through the upgrade, and CONFIRM the draft', async () => {
    expect(await listed()).toEqual({ chart: `subscription-platform-${version}`, app_version: version, status: 'deployed' });
    live.events = await eventLog(await expectStateKeptAndDraftConfirmed());
  }, 300_000);

  it('should pass helm test after the upgrade', async () => {
    const output = await platform!.helmTest();
    expect(chartTestsNotPassed(output)).toEqual([]);
  }, 300_000);

  it('should roll back to the previous release the same way: no failed request, no probe failure', async () => {
    await rollWhileProbing(() => platform!.helm(['rollback', RELEASE, '1', '-n', namespace, '--wait', '--timeout', ROLLOUT_TIMEOUT]), (service) => previous.tags[service]!);
  }, 900_000);

  it('should keep the state through the rollback, CONFIRM the draft made on this version, and pass helm test', async () => {
    expect(await listed()).toEqual({ chart: `subscription-platform-${previous.version}`, app_version: previous.version, status: 'deployed' });
    await expectStateKeptAndDraftConfirmed();
    // The previous release's chart has no tests: helm test passes with none.
    await platform!.helmTest();
  }, 300_000);

  it('should install this version from the registry by version after helm uninstall, pass helm test, and find the state in Redis as it was', async () => {
    await platform!.helm(['uninstall', RELEASE, '-n', namespace, '--wait', '--timeout', '120s']);
    await fromRegistry('install');
    expect(await listed()).toEqual({ chart: `subscription-platform-${version}`, app_version: version, status: 'deployed' });
    const images = (await platform!.pods()).filter((pod) => (COMPONENTS as readonly string[]).includes(pod.metadata.labels?.['app.kubernetes.io/name'] ?? ''));
    expect(images.map((pod) => pod.spec.containers[0]!.image).sort()).toEqual(COMPONENTS.map((service) => `${registry!.address}/subscription-platform/${service}:${version}`).sort());
    const output = await platform!.helmTest();
    expect(chartTestsNotPassed(output)).toEqual([]);
    await expectStateKeptAndDraftConfirmed();
  }, 600_000);
});
