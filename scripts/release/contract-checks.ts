/**
 * The breaking changes of the platform's contracts between two trees (the previous release's and
 * this one), each with the subject an operator-facing CHANGELOG "Upgrading" entry must name:
 * the cache proto (`buf breaking`), each OpenAPI document (`oasdiff breaking`), the AsyncAPI
 * document and the charts' values.schema.json (compared here).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';

const run = promisify(execFile);

export interface Finding {
  /** Which contract: `proto`, an OpenAPI document's path, `asyncapi`, or a values.schema.json's path. */
  contract: string;
  /** What an Upgrading entry names, in backticks: `CacheRequest.ttl_ms`, `GET /sessions`, `UserLoggedInEvent.role`, `auth.replicaCount`. */
  subject: string;
  /** The change, as the tool or check says it. */
  change: string;
}

/** The OpenAPI documents of the services. */
export function openapiDocuments(root: string): string[] {
  return readdirSync(join(root, 'services'))
    .map((service) => `services/${service}/openapi.yaml`)
    .filter((file) => existsSync(join(root, file)))
    .sort();
}

/** The subject of one of buf's messages: the field, RPC, message or service it names. */
export function protoSubject(message: string, file: string): string {
  const named = /with name "(\w+)" on (?:message|enum) "([\w.]+)"/.exec(message);
  if (named) return `${named[2]}.${named[1]}`;
  const rpc = /RPC "(\w+)" on service "(\w+)"/.exec(message);
  if (rpc) return `${rpc[2]}.${rpc[1]}`;
  const element = /(?:message|enum|service) "([\w.]+)"/.exec(message);
  return element ? element[1]! : file;
}

/** `buf breaking` of the current proto folder against the previous one. */
export async function protoFindings(buf: string, previous: string, current: string): Promise<Finding[]> {
  // Run in the current tree with a relative input, so buf names files `proto/…` as in the repository.
  const args = ['breaking', 'proto', '--against', join(previous, 'proto'), '--error-format', 'json'];
  let stdout: string;
  try {
    ({ stdout } = await run(buf, args, { cwd: current, maxBuffer: 16 * 1024 * 1024 }));
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    // 100: breaking changes found (listed on stdout); anything else is buf failing.
    if (failed.code !== 100) throw new Error(`buf ${args.join(' ')} failed: ${failed.stderr ?? String(error)}`);
    stdout = failed.stdout ?? '';
  }
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { path: string; start_line?: number; type: string; message: string })
    .map((item) => ({
      contract: 'proto',
      subject: protoSubject(item.message, item.path),
      change: `${item.path}${item.start_line === undefined ? '' : `:${item.start_line}`}: ${item.message} (${item.type})`,
    }));
}

/** `oasdiff breaking` of each OpenAPI document (errors only: warnings are "may break"); a removed document is one finding. */
export async function openapiFindings(oasdiff: string, previous: string, current: string): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const file of openapiDocuments(previous)) {
    if (!existsSync(join(current, file))) {
      findings.push({ contract: file, subject: file, change: `${file}: the document was removed` });
      continue;
    }
    const { stdout } = await run(oasdiff, ['breaking', join(previous, file), join(current, file), '--format', 'json'], { maxBuffer: 16 * 1024 * 1024 });
    const changes = JSON.parse(stdout === '' ? '[]' : stdout) as Array<{ id: string; text: string; level: number | string; operation?: string; path?: string }> | null;
    for (const change of changes ?? []) {
      if (change.level !== 3 && change.level !== 'error') continue;
      const subject = change.operation !== undefined && change.path !== undefined ? `${change.operation} ${change.path}` : file;
      findings.push({ contract: file, subject, change: `${file}: ${subject}: ${change.text} [${change.id}]` });
    }
  }
  return findings;
}

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

const typeOf = (schema: JsonSchema): string => [schema.type ?? []].flat().sort().join('|');
const join2 = (prefix: string, name: string): string => (prefix === '' ? name : `${prefix}.${name}`);

interface Change {
  subject: string;
  change: string;
}

/** Properties of `before` removed or retyped in `after`, recursively, under `prefix`. */
function propertyChanges(before: JsonSchema, after: JsonSchema, prefix: string): Change[] {
  return Object.entries(before.properties ?? {}).flatMap(([name, was]): Change[] => {
    const path = join2(prefix, name);
    const now = after.properties?.[name];
    if (now === undefined) return [{ subject: path, change: 'removed' }];
    const retyped = typeOf(was) !== '' && typeOf(now) !== '' && typeOf(was) !== typeOf(now);
    return [...(retyped ? [{ subject: path, change: `type ${typeOf(was)} → ${typeOf(now)}` }] : []), ...propertyChanges(was, now, path)];
  });
}

/** Properties required in `after` that `before` did not require, recursively, under `prefix`. */
function requiredChanges(before: JsonSchema, after: JsonSchema, prefix: string): Change[] {
  const added = (after.required ?? []).filter((name) => !(before.required ?? []).includes(name)).map((name) => ({ subject: join2(prefix, name), change: 'made required' }));
  const nested = Object.entries(before.properties ?? {}).flatMap(([name, was]) => {
    const now = after.properties?.[name];
    return now === undefined ? [] : requiredChanges(was, now, join2(prefix, name));
  });
  return [...added, ...nested];
}

interface AsyncApi {
  channels?: Record<string, { address?: string; messages?: Record<string, unknown> }>;
  components?: { messages?: Record<string, { payload?: JsonSchema }> };
}

/** Channels removed or moved to another address, and events a channel no longer carries. */
function channelChanges(before: AsyncApi, after: AsyncApi): Change[] {
  return Object.entries(before.channels ?? {}).flatMap(([channel, was]): Change[] => {
    const now = after.channels?.[channel];
    if (now === undefined) return [{ subject: channel, change: 'the channel was removed' }];
    if (was.address !== now.address) return [{ subject: channel, change: `the channel's address changed from ${was.address} to ${now.address}` }];
    return Object.keys(was.messages ?? {})
      .filter((message) => now.messages?.[message] === undefined)
      .map((message) => ({ subject: `${channel}.${message}`, change: `the event is no longer sent on ${channel}` }));
  });
}

/** Events removed, and payload fields removed, retyped or made required. */
function messageChanges(before: AsyncApi, after: AsyncApi): Change[] {
  return Object.entries(before.components?.messages ?? {}).flatMap(([message, was]): Change[] => {
    const now = after.components?.messages?.[message];
    if (now === undefined) return [{ subject: message, change: 'the event was removed' }];
    const [wasPayload, nowPayload] = [was.payload ?? {}, now.payload ?? {}];
    return [...propertyChanges(wasPayload, nowPayload, message), ...requiredChanges(wasPayload, nowPayload, message)];
  });
}

/** docs/asyncapi.yaml: channels or events removed, a channel's address changed, payload fields removed, retyped or made required. */
export function asyncapiFindings(previous: string, current: string): Finding[] {
  const file = 'docs/asyncapi.yaml';
  const before = parse(readFileSync(join(previous, file), 'utf8')) as AsyncApi;
  const after = parse(readFileSync(join(current, file), 'utf8')) as AsyncApi;
  return [...channelChanges(before, after), ...messageChanges(before, after)].map(({ subject, change }) => ({ contract: 'asyncapi', subject, change: `${file}: ${subject}: ${change}` }));
}

/** The values.schema.json files of the umbrella chart and its components, with the values prefix of each (`auth.` for charts/auth). */
function valuesSchemas(root: string): Map<string, string> {
  const umbrella = 'charts/subscription-platform';
  const schemas = new Map<string, string>([[`${umbrella}/values.schema.json`, '']]);
  if (!existsSync(join(root, umbrella, 'charts'))) return schemas;
  for (const name of readdirSync(join(root, umbrella, 'charts')).sort()) {
    const file = `${umbrella}/charts/${name}/values.schema.json`;
    if (existsSync(join(root, file))) schemas.set(file, name);
  }
  return schemas;
}

/** Each values.schema.json: a value removed or retyped (as the umbrella's values name it). */
export function valuesFindings(previous: string, current: string): Finding[] {
  const findings: Finding[] = [];
  for (const [file, prefix] of valuesSchemas(previous)) {
    if (!existsSync(join(previous, file))) continue;
    const before = JSON.parse(readFileSync(join(previous, file), 'utf8')) as JsonSchema;
    if (!existsSync(join(current, file))) {
      findings.push({ contract: file, subject: prefix === '' ? file : prefix, change: `${file}: the chart's values schema was removed` });
      continue;
    }
    const after = JSON.parse(readFileSync(join(current, file), 'utf8')) as JsonSchema;
    // The umbrella's schema embeds the components' (under auth, cache, …): each change once.
    for (const change of propertyChanges(before, after, prefix)) {
      if (!findings.some((finding) => finding.subject === change.subject)) findings.push({ contract: file, subject: change.subject, change: `${file}: ${change.subject}: ${change.change}` });
    }
  }
  return findings;
}
