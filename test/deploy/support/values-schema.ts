import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';

/**
 * Builds each chart's values.schema.json (JSON Schema draft-07, additionalProperties false at
 * every level the chart owns) from its values.yaml: the structure and types come from the
 * defaults, descriptions from the `## @param` lines, and what defaults cannot say (enums,
 * ranges, free-form maps, item types of empty lists, nullable numbers) from the rules below.
 * chart-schema.test.ts checks that the committed files equal what this builds, so values.yaml
 * and its schema cannot drift apart; regenerate with
 *   node test/deploy/support/write-values-schemas.ts
 */

export type JsonSchema = Record<string, unknown>;

export const chartsDir = join(import.meta.dirname, '../../../charts/subscription-platform');
export const subcharts = ['cache', 'auth', 'graph-registry', 'webhooks', 'graph-controller'] as const;
export type Subchart = (typeof subcharts)[number];

const stringMap: JsonSchema = { type: 'object', additionalProperties: { type: 'string' } };
const freeObject: JsonSchema = { type: 'object' };
const objectList: JsonSchema = { type: 'array', items: { type: 'object' } };
const stringList: JsonSchema = { type: 'array', items: { type: 'string', minLength: 1 } };
const port: JsonSchema = { type: 'integer', minimum: 1, maximum: 65535 };
const quantity: JsonSchema = { type: ['string', 'number'], pattern: '^[0-9]+(\\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$' };
const intOrPercent: JsonSchema = { type: ['integer', 'string'], pattern: '^([0-9]+%?)?$' };
const httpUrlOrEmpty: JsonSchema = { type: 'string', pattern: '^(https?://[^\\s/?#]+.*)?$' };
/** The components of a release a NetworkPolicy names: the five services and the registry's optional Hive Gateway (hiveGateway.enabled). */
const components = ['cache', 'auth', 'graph-registry', 'webhooks', 'graph-controller', 'hive-gateway'];
const resourceList: JsonSchema = { type: 'object', additionalProperties: quantity };
const positive: JsonSchema = { type: 'integer', minimum: 1 };

/** Rules by dotted path (`*` matches one key), applied over what the defaults imply. */
const rules: Record<string, JsonSchema> = {
  'global.imagePullSecrets': stringList,
  'image.pullSecrets': stringList,
  'image.pullPolicy': { type: 'string', enum: ['Always', 'IfNotPresent', 'Never'] },
  'image.digest': { type: 'string', pattern: '^(sha256:[a-f0-9]{64})?$' },
  'image.repository': { type: 'string', minLength: 1 },
  'global.otlpEndpoint': httpUrlOrEmpty,
  'otlp.endpoint': httpUrlOrEmpty,
  commonLabels: stringMap,
  commonAnnotations: stringMap,
  podAnnotations: stringMap,
  podLabels: stringMap,
  nodeSelector: stringMap,
  extraConfig: { type: 'object', propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_.-]*$' }, additionalProperties: { type: ['string', 'number', 'boolean'] } },
  extraEnv: objectList,
  extraVolumes: objectList,
  extraVolumeMounts: objectList,
  affinity: freeObject,
  tolerations: objectList,
  topologySpreadConstraints: objectList,
  replicaCount: { type: 'integer', minimum: 0 },
  revisionHistoryLimit: { type: 'integer', minimum: 0 },
  'updateStrategy.type': { type: 'string', enum: ['RollingUpdate', 'Recreate'] },
  'updateStrategy.rollingUpdate': { type: 'object', additionalProperties: false, properties: { maxSurge: intOrPercent, maxUnavailable: intOrPercent } },
  logLevel: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
  'containerPorts.*': port,
  'service.ports.*': port,
  terminationGracePeriodSeconds: positive,
  preStopSleepSeconds: { type: 'integer', minimum: 0 },
  resources: { type: 'object', additionalProperties: false, properties: { requests: resourceList, limits: resourceList } },
  tmpSizeLimit: quantity,
  'podSecurityContext.runAsUser': { type: 'integer', minimum: 0 },
  'podSecurityContext.runAsGroup': { type: 'integer', minimum: 0 },
  'podSecurityContext.fsGroup': { type: 'integer', minimum: 0 },
  'podSecurityContext.fsGroupChangePolicy': { type: 'string', enum: ['OnRootMismatch', 'Always'] },
  'podSecurityContext.seccompProfile.type': { type: 'string', enum: ['RuntimeDefault', 'Localhost', 'Unconfined'] },
  'containerSecurityContext.runAsUser': { type: 'integer', minimum: 0 },
  'containerSecurityContext.runAsGroup': { type: 'integer', minimum: 0 },
  'containerSecurityContext.capabilities.drop': stringList,
  'containerSecurityContext.seccompProfile.type': { type: 'string', enum: ['RuntimeDefault', 'Localhost', 'Unconfined'] },
  '*Probe.initialDelaySeconds': { type: 'integer', minimum: 0 },
  '*Probe.periodSeconds': positive,
  '*Probe.timeoutSeconds': positive,
  '*Probe.failureThreshold': positive,
  '*Probe.successThreshold': positive,
  customStartupProbe: freeObject,
  customLivenessProbe: freeObject,
  customReadinessProbe: freeObject,
  podAntiAffinityPreset: { type: 'string', enum: ['', 'soft', 'hard'] },
  'serviceAccount.annotations': stringMap,
  'service.type': { type: 'string', enum: ['ClusterIP', 'NodePort', 'LoadBalancer'] },
  'service.annotations': stringMap,
  'service.sessionAffinity': { type: 'string', enum: ['None', 'ClientIP'] },
  'service.appProtocol': { type: 'string', minLength: 1 },
  'service.graphAnnotations.port': { type: ['string', 'integer'] },
  'service.graphAnnotations.path': { type: 'string', pattern: '^/' },
  'service.graphAnnotations.scheme': { type: 'string', enum: ['http', 'https'] },
  'autoscaling.minReplicas': positive,
  'autoscaling.maxReplicas': positive,
  'autoscaling.targetCPUUtilizationPercentage': { type: ['integer', 'null'], minimum: 1 },
  'autoscaling.targetMemoryUtilizationPercentage': { type: ['integer', 'null'], minimum: 1 },
  'autoscaling.behavior': freeObject,
  'pdb.minAvailable': intOrPercent,
  'pdb.maxUnavailable': intOrPercent,
  'networkPolicy.allowedComponents': { type: 'array', items: { type: 'string', enum: components }, uniqueItems: true },
  'networkPolicy.ingressController.namespaceSelector': freeObject,
  'networkPolicy.ingressController.podSelector': freeObject,
  'networkPolicy.extraIngressFrom': objectList,
  'networkPolicy.metricsFrom': objectList,
  'networkPolicy.egress.dns.to': objectList,
  'networkPolicy.egress.toComponents': {
    type: 'array',
    items: { type: 'object', additionalProperties: false, required: ['component', 'port'], properties: { component: { type: 'string', enum: components }, port } },
  },
  'networkPolicy.egress.destinations.*.ports': { type: 'array', minItems: 1, items: port },
  'networkPolicy.egress.destinations.*.to': objectList,
  'networkPolicy.egress.extra': objectList,
  'serviceMonitor.labels': stringMap,
  'serviceMonitor.annotations': stringMap,
  'prometheusRule.labels': stringMap,
  'prometheusRule.annotations': stringMap,
  'prometheusRule.runbookBaseUrl': { type: 'string', pattern: '^https?://[^\\s#]+$' },
  'serviceMonitor.interval': { type: 'string', pattern: '^[0-9]+(ms|s|m|h)$' },
  'serviceMonitor.scrapeTimeout': { type: 'string', pattern: '^[0-9]+(ms|s|m|h)$' },
  'serviceMonitor.relabelings': objectList,
  'serviceMonitor.metricRelabelings': objectList,
  'ingress.annotations': stringMap,
  'ingress.pathType': { type: 'string', enum: ['Prefix', 'Exact', 'ImplementationSpecific'] },
  'ingress.path': { type: 'string', pattern: '^/' },
  // The graph registry's optional Hive Gateway (hiveGateway.*) and its CDN paths.
  'cdn.target': { type: 'string', pattern: '^[A-Za-z0-9._-]{1,64}$' },
  'hiveGateway.image.pullPolicy': { type: 'string', enum: ['Always', 'IfNotPresent', 'Never'] },
  'hiveGateway.image.digest': { type: 'string', pattern: '^(sha256:[a-f0-9]{64})?$' },
  'hiveGateway.image.repository': { type: 'string', minLength: 1 },
  'hiveGateway.image.tag': { type: 'string', minLength: 1 },
  'hiveGateway.replicaCount': { type: 'integer', minimum: 0 },
  'hiveGateway.pollingInterval': { type: 'string', pattern: '^[0-9]+(ms|s|m|h)$' },
  'hiveGateway.cdnKey.key': { type: 'string', minLength: 1 },
  'hiveGateway.containerPort': port,
  'hiveGateway.service.port': port,
  'hiveGateway.service.type': { type: 'string', enum: ['ClusterIP', 'NodePort', 'LoadBalancer'] },
  'hiveGateway.service.annotations': stringMap,
  'hiveGateway.resources': { type: 'object', additionalProperties: false, properties: { requests: resourceList, limits: resourceList } },
  'hiveGateway.extraEnv': objectList,
  'hiveGateway.networkPolicy.ingressFrom': objectList,
  'hiveGateway.networkPolicy.subgraphsTo': objectList,
  // Components' own settings.
  backend: { type: 'string', enum: ['memory', 'redis'] },
  capacity: positive,
  maxValueBytes: positive,
  'redis.url': { type: 'string', pattern: '^((redis|rediss|redis\\+sentinel|redis\\+cluster)://.+)?$' },
  'store.url': { type: 'string', pattern: '^((redis|rediss)://.+|memory://.*)?$' },
  publicBaseUrl: httpUrlOrEmpty,
  allowedRedirectUris: stringList,
  proxyHops: positive,
  environment: { type: 'string', enum: ['Production', 'Staging', 'Development'] },
  'locales.supported': { type: 'array', minItems: 1, items: { type: 'string', pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$' } },
  'locales.default': { type: 'string', pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$' },
  'oidc.serverUrl': httpUrlOrEmpty,
  'oidc.*Ms': positive,
  'oidc.*Seconds': positive,
  'kafka.brokers': { type: 'array', items: { type: 'string', pattern: '^[^\\s,]+:[0-9]{1,5}$' } },
  'kafka.*Ms': positive,
  'cache.url': { type: 'string', pattern: '^((grpc://|dns:)?[^\\s/:]+:[0-9]{1,5})?$' },
  'cache.deadlineMs': positive,
  'otp.resendCooldownSeconds': { type: 'integer', minimum: 0 },
  'otp.prefixDigits': { type: 'integer', minimum: 1, maximum: 14 },
  'otp.allowedCountries': { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', pattern: '^(\\*|[A-Za-z]{2}|001)$' } },
  'otp.*Countries': { type: 'array', uniqueItems: true, items: { type: 'string', pattern: '^([A-Za-z]{2}|001)$' } },
  'otp.allowedNumberTypes': {
    type: 'array',
    minItems: 1,
    uniqueItems: true,
    items: { type: 'string', enum: ['MOBILE', 'FIXED_LINE_OR_MOBILE', 'FIXED_LINE', 'TOLL_FREE', 'PREMIUM_RATE', 'SHARED_COST', 'VOIP', 'PERSONAL_NUMBER', 'PAGER', 'UAN', 'VOICEMAIL'] },
  },
  'otp.*': positive,
  'sessions.nearCacheEntries': { type: 'integer', minimum: 0, maximum: 1_000_000 },
  workers: { type: 'integer', minimum: 1, maximum: 64 },
  'sessions.maxPerUser': { type: 'integer', minimum: 1, maximum: 100 },
  'sessions.*': positive,
  'oidc.backchannelLogoutMaxAgeSeconds': { type: 'integer', minimum: 1, maximum: 3600 },
  'smsProvider.accountSid': { type: 'string', pattern: '^(AC[0-9a-fA-F]{32})?$' },
  'smsProvider.messageServiceSid': { type: 'string', pattern: '^(MG[0-9a-fA-F]{32})?$' },
  'paymentProvider.apiUrl': httpUrlOrEmpty,
  'paymentProvider.reconcileIntervalSeconds': { type: 'integer', minimum: 0 },
  'eventLog.*': positive,
  graphqlApiUrl: httpUrlOrEmpty,
  localizationApiUrl: httpUrlOrEmpty,
  authApiUrl: httpUrlOrEmpty,
  'links.*': httpUrlOrEmpty,
  'announcements.draftTtlMs': positive,
  'registry.url': httpUrlOrEmpty,
  'registry.timeoutMs': positive,
  watchNamespaces: { type: 'array', uniqueItems: true, items: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$' } },
  clusterDomain: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$' },
  resyncSeconds: positive,
  watchIdleSeconds: positive,
  'backoff.*': positive,
  'leaderElection.leaseName': { type: 'string', pattern: '^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$' },
  'leaderElection.*Seconds': positive,
  'secretKeys.*': { type: 'string', pattern: '^[-._a-zA-Z0-9]+$' },
  // Optional (empty: the webhooks admin API is off), else a key of existingSecret like secretKeys.
  'adminApi.existingSecretKey': { type: 'string', pattern: '^([-._a-zA-Z0-9]+)?$' },
  existingSecret: { type: 'string', pattern: '^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$' },
  'tls.existingSecret': { type: 'string', pattern: '^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$' },
};

function matches(pattern: string, path: string): boolean {
  const p = pattern.split('.');
  const k = path.split('.');
  if (p.length !== k.length) return false;
  return p.every((part, i) => {
    if (!part.includes('*')) return part === k[i];
    const re = new RegExp(`^${part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
    return re.test(k[i]!);
  });
}

/** The most specific rule for a path: exact before wildcard. */
function ruleFor(path: string): JsonSchema | undefined {
  if (rules[path]) return rules[path];
  const wildcard = Object.keys(rules).filter((pattern) => pattern.includes('*') && matches(pattern, path));
  wildcard.sort((a, b) => a.split('*').length - b.split('*').length || b.length - a.length);
  return wildcard[0] ? rules[wildcard[0]] : undefined;
}

/** `## @param path description` lines of a values.yaml, by path. */
export function paramDocs(text: string): Map<string, string> {
  const docs = new Map<string, string>();
  for (const match of text.matchAll(/^## @param (\S+) (.+)$/gm)) docs.set(match[1]!, match[2]!.trim());
  return docs;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (Number.isInteger(value)) return 'integer';
  return typeof value;
}

function infer(value: unknown, path: string, docs: Map<string, string>): JsonSchema {
  const rule = ruleFor(path);
  const described = (schema: JsonSchema): JsonSchema => (docs.has(path) ? { description: docs.get(path), ...schema } : schema);
  if (rule) return described(rule);
  const type = typeOf(value);
  if (type === 'object') {
    const properties: Record<string, JsonSchema> = {};
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      properties[key] = infer(child, path === '' ? key : `${path}.${key}`, docs);
    }
    return described({ type: 'object', additionalProperties: false, properties });
  }
  if (type === 'array') {
    const first = (value as unknown[])[0];
    if (first === undefined || typeOf(first) === 'object') throw new Error(`values schema: no rule gives the item type of ${path}`);
    return described({ type: 'array', items: { type: typeOf(first) } });
  }
  if (type === 'null') throw new Error(`values schema: no rule gives the type of ${path} (null default)`);
  return described({ type });
}

export function readValues(chartDir: string): { values: Record<string, unknown>; text: string } {
  const text = readFileSync(join(chartDir, 'values.yaml'), 'utf8');
  return { values: parseDocument(text).toJS() as Record<string, unknown>, text };
}

/** Helm gives every dependency a values section; the library has no values but `global`. */
const libraryValues: JsonSchema = {
  description: 'Values of the platform-lib library chart: none (helm adds the section, and global)',
  type: 'object',
  additionalProperties: false,
  properties: { global: { type: 'object' } },
};

/** The schema of one subchart, from its values.yaml. */
export function subchartSchema(name: Subchart): JsonSchema {
  const { values, text } = readValues(join(chartsDir, 'charts', name));
  const body = infer(values, '', paramDocs(text)) as { properties: Record<string, JsonSchema> };
  body.properties['platform-lib'] = libraryValues;
  return { $schema: 'http://json-schema.org/draft-07/schema#', title: `Values of the ${name} chart`, ...body };
}

/**
 * The umbrella's schema: its global and prometheusRule sections, and each component's whole schema
 * under the component's key, so a typo is refused even in a disabled component's values.
 */
export function umbrellaSchema(): JsonSchema {
  const { values, text } = readValues(chartsDir);
  const docs = paramDocs(text);
  const top = infer({ global: values.global, prometheusRule: values.prometheusRule }, '', docs) as { properties: Record<string, JsonSchema> };
  const properties: Record<string, JsonSchema> = { global: top.properties.global!, prometheusRule: top.properties.prometheusRule!, 'platform-lib': libraryValues };
  for (const name of subcharts) {
    const component = subchartSchema(name);
    delete component.$schema;
    delete component.title;
    properties[name] = { description: docs.get(`${name}.enabled`), ...component };
  }
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Values of the subscription-platform chart',
    type: 'object',
    additionalProperties: false,
    properties,
  };
}

/** Every chart's schema file and its expected content. */
export function expectedSchemas(): { file: string; schema: JsonSchema }[] {
  return [
    { file: join(chartsDir, 'values.schema.json'), schema: umbrellaSchema() },
    ...subcharts.map((name) => ({ file: join(chartsDir, 'charts', name, 'values.schema.json'), schema: subchartSchema(name) })),
  ];
}

export function formatSchema(schema: JsonSchema): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}
