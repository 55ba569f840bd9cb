import type { V1Service, V1ServicePort } from '@kubernetes/client-node';
import { GRAPH_NAME_PATTERN, graphNameProblem } from '@sp/graphs';

/** The annotations a Service carries to have its GraphQL endpoint registered. */
export const ANNOTATIONS = {
  /** Required to opt in: the graph name in the registry. */
  name: 'graph-registry.io/name',
  /** Port name or number; default the Service's first port. */
  port: 'graph-registry.io/port',
  /** URL path; default `/graphql`. */
  path: 'graph-registry.io/path',
  /** `http` (default) or `https`. */
  scheme: 'graph-registry.io/scheme',
  /** `"true"`: the graph is a federation subgraph; its schema is read (`{ _service { sdl } }`) and published. */
  federation: 'graph-registry.io/federation',
  /**
   * The URL to register instead of the one made of the Service's name, port, path and scheme: for
   * endpoints the cluster DNS name does not reach (a loopback fixture in `make up`, an ingress).
   */
  url: 'graph-registry.io/url',
} as const;

export const DEFAULT_PATH = '/graphql';
export const DEFAULT_SCHEME = 'http';

/** An absolute path of RFC 3986 path characters (percent-encoding allowed): no query, fragment or spaces. */
const PATH_PATTERN = /^\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$/;
const MAX_PATH_LENGTH = 2048;

/** What a Service's annotations say: nothing (not opted in), a graph to register, or why not. */
export type GraphAnnotation =
  | { kind: 'none' }
  | { kind: 'invalid'; problems: readonly string[] }
  /** `federated`: the Service opted into federation (its subgraph schema is published). */
  | { kind: 'graph'; name: string; url: string; federated?: true };

type Outcome<T> = { value: T } | { problem: string };

function annotation(service: V1Service, key: string): string | undefined {
  const value = service.metadata?.annotations?.[key];
  return value === undefined ? undefined : value.trim();
}

/** True when the Service opts in (a non-empty name annotation), valid or not. */
export function hasGraphAnnotation(service: V1Service): boolean {
  return (annotation(service, ANNOTATIONS.name) ?? '') !== '';
}

function checkName(name: string): Outcome<string> {
  const problem = graphNameProblem(name);
  if (problem === 'pattern') return { problem: `${ANNOTATIONS.name} "${name}" must match ${GRAPH_NAME_PATTERN.source}` };
  if (problem === 'reserved') return { problem: `${ANNOTATIONS.name} "${name}" is reserved by the graph registry` };
  return { value: name };
}

/** Headless and ExternalName Services resolve straight to their backends, so any port reaches them. */
function acceptsAnyPort(service: V1Service): boolean {
  return service.spec?.type === 'ExternalName' || service.spec?.clusterIP === 'None';
}

function checkPortNumber(value: string, service: V1Service, ports: readonly V1ServicePort[]): Outcome<number> {
  const port = Number(value);
  if (port < 1 || port > 65535) return { problem: `${ANNOTATIONS.port} "${value}" must be a port number from 1 to 65535 or a port name` };
  if (!ports.some((entry) => entry.port === port) && !acceptsAnyPort(service)) {
    return { problem: `${ANNOTATIONS.port} "${value}" is not a port of the Service` };
  }
  return { value: port };
}

function checkPort(value: string | undefined, service: V1Service): Outcome<number> {
  const ports = service.spec?.ports ?? [];
  if (value === undefined || value === '') {
    const first = ports[0]?.port;
    return first === undefined ? { problem: `the Service has no ports: set ${ANNOTATIONS.port} to a port number` } : { value: first };
  }
  if (/^\d+$/.test(value)) return checkPortNumber(value, service, ports);
  const named = ports.find((entry) => entry.name === value);
  return named ? { value: named.port } : { problem: `${ANNOTATIONS.port} "${value}" names no port of the Service` };
}

function checkPath(value: string | undefined): Outcome<string> {
  if (value === undefined || value === '') return { value: DEFAULT_PATH };
  if (!value.startsWith('/')) return { problem: `${ANNOTATIONS.path} "${value}" must start with "/"` };
  if (value.length > MAX_PATH_LENGTH) return { problem: `${ANNOTATIONS.path} is longer than ${MAX_PATH_LENGTH} characters` };
  if (!PATH_PATTERN.test(value)) {
    return { problem: `${ANNOTATIONS.path} "${value}" must be a URL path: no spaces, "?", "#" or characters that need percent-encoding` };
  }
  return { value };
}

function checkScheme(value: string | undefined): Outcome<string> {
  if (value === undefined || value === '') return { value: DEFAULT_SCHEME };
  const scheme = value.toLowerCase();
  return scheme === 'http' || scheme === 'https' ? { value: scheme } : { problem: `${ANNOTATIONS.scheme} "${value}" must be http or https` };
}

function checkFederation(value: string | undefined): Outcome<boolean> {
  if (value === undefined || value === '' || value === 'false') return { value: false };
  return value === 'true' ? { value: true } : { problem: `${ANNOTATIONS.federation} "${value}" must be "true" or "false"` };
}

const MAX_URL_LENGTH = 2048;

/** An absolute http(s) URL without whitespace or fragment, as the registry stores it. */
function checkUrl(value: string): Outcome<string> {
  if (value.length > MAX_URL_LENGTH) return { problem: `${ANNOTATIONS.url} is longer than ${MAX_URL_LENGTH} characters` };
  let url: URL | undefined;
  try {
    url = /\s/.test(value) ? undefined : new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || !['http:', 'https:'].includes(url.protocol) || url.hash !== '') return { problem: `${ANNOTATIONS.url} "${value}" must be an absolute http or https URL without a fragment` };
  return { value };
}

/** `{scheme}://{service}.{namespace}.svc.{clusterDomain}:{port}{path}`. */
export function graphUrl(parts: { scheme: string; service: string; namespace: string; clusterDomain: string; port: number; path: string }): string {
  return `${parts.scheme}://${parts.service}.${parts.namespace}.svc.${parts.clusterDomain}:${parts.port}${parts.path}`;
}

type Parts = { name: string; port: number; path: string; scheme: string };

/** With `graph-registry.io/url`, the URL is given: port, path and scheme would be ignored, so they are refused beside it. */
function checkGiven(service: V1Service, rawName: string, rawUrl: string): { name: string; url: string } | { problems: string[] } {
  const name = checkName(rawName);
  const url = checkUrl(rawUrl);
  const ignored = [ANNOTATIONS.port, ANNOTATIONS.path, ANNOTATIONS.scheme].filter((key) => annotation(service, key) !== undefined);
  const problems = [name, url].flatMap((outcome) => ('problem' in outcome ? [outcome.problem] : []));
  if (ignored.length > 0) problems.push(`${ANNOTATIONS.url} gives the whole URL: remove ${ignored.join(', ')}`);
  return problems.length === 0 && 'value' in name && 'value' in url ? { name: name.value, url: url.value } : { problems };
}

function checkAll(service: V1Service, rawName: string): Parts | { problems: string[] } {
  const name = checkName(rawName);
  const port = checkPort(annotation(service, ANNOTATIONS.port), service);
  const path = checkPath(annotation(service, ANNOTATIONS.path));
  const scheme = checkScheme(annotation(service, ANNOTATIONS.scheme));
  if ('value' in name && 'value' in port && 'value' in path && 'value' in scheme) {
    return { name: name.value, port: port.value, path: path.value, scheme: scheme.value };
  }
  return { problems: [name, port, path, scheme].flatMap((outcome) => ('problem' in outcome ? [outcome.problem] : [])) };
}

/** The problems an outcome of the checks carries (none when it has a value). */
const problemsOf = (outcome: object): string[] => ('problems' in outcome ? (outcome.problems as string[]) : 'problem' in outcome ? [outcome.problem as string] : []);

/**
 * Reads a Service's graph annotations. Values are trimmed; an absent or empty name annotation
 * means the Service does not take part. Every problem is reported, not just the first.
 */
export function parseGraphAnnotations(service: V1Service, clusterDomain = 'cluster.local'): GraphAnnotation {
  const rawName = annotation(service, ANNOTATIONS.name);
  if (rawName === undefined || rawName === '') return { kind: 'none' };
  const federation = checkFederation(annotation(service, ANNOTATIONS.federation));
  const rawUrl = annotation(service, ANNOTATIONS.url);
  const checked = rawUrl === undefined || rawUrl === '' ? fromParts(service, rawName, clusterDomain) : checkGiven(service, rawName, rawUrl);
  if ('problems' in checked || !('value' in federation)) return { kind: 'invalid', problems: [...problemsOf(checked), ...problemsOf(federation)] };
  return { kind: 'graph', name: checked.name, url: checked.url, ...(federation.value ? { federated: true as const } : {}) };
}

/** The URL made of the Service's DNS name, port, path and scheme. */
function fromParts(service: V1Service, rawName: string, clusterDomain: string): { name: string; url: string } | { problems: string[] } {
  const parts = checkAll(service, rawName);
  if ('problems' in parts) return parts;
  return { name: parts.name, url: graphUrl({ ...parts, service: service.metadata?.name ?? '', namespace: service.metadata?.namespace ?? 'default', clusterDomain }) };
}
