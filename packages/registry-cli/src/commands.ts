import { readFile } from 'node:fs/promises';
import { UsageError, type CliConfig } from './config.ts';
import { EXIT } from './exit-status.ts';
import { bodyOf, errorOf, oneLine, type Answer, type RegistryClient } from './registry-client.ts';
import type { SchemaChangeReport, SchemaVersionInfo } from '@sp/graphs';
import { formatProblems, formatReport, formatVersion, type Problem } from './report-format.ts';

/** Where a command writes; exit status 0 (done) or 1 (refused, invalid, breaking, not found): exit-status.ts. */
export interface Output {
  out(text: string): void;
  err(text: string): void;
}

type Command = (client: RegistryClient, config: CliConfig, output: Output) => Promise<number>;

interface PublishBody {
  created: boolean;
  version: SchemaVersionInfo;
  report: SchemaChangeReport;
}

async function readSchema(file: string | undefined): Promise<string> {
  if (file === undefined) throw new UsageError('a schema FILE is needed');
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The registry's refusal of what was asked (its JSON error; anything else never reaches a command): exit status 1. */
function refused(answer: Answer, output: Output): number {
  output.err(`refused: ${answer.status} ${oneLine(errorOf(answer.json) ?? '')}`);
  return EXIT.verdict;
}

function invalid(file: string, answer: Answer, output: Output): number {
  const { problems } = bodyOf<{ problems?: Problem[] }>(answer);
  const listed = Array.isArray(problems) ? problems : [{ message: errorOf(answer.json) ?? '', locations: [] }];
  output.err(formatProblems(file, listed.map((problem) => ({ message: oneLine(String(problem.message)), locations: Array.isArray(problem.locations) ? problem.locations : [] }))));
  return EXIT.verdict;
}

/** The composition errors of a 409 (a subgraph that does not compose), one a line: code, coordinate, message. */
function compositionErrors(errors: ReadonlyArray<{ code?: string; coordinate?: string | null; message?: string }>): string {
  return errors.map((error) => `  ${error.code ?? 'COMPOSITION_ERROR'}${error.coordinate ? ` ${error.coordinate}` : ''}: ${oneLine(String(error.message ?? ''))}`).join('\n');
}

/** A 409: breaking changes refused by the policy (with the report), or subgraphs that do not compose (with their errors). */
function conflict(answer: Answer, output: Output): number {
  const body = bodyOf<{ error: string; baseVersion?: number | null; report?: SchemaChangeReport; errors?: Array<{ code?: string; coordinate?: string | null; message?: string }> }>(answer);
  if (Array.isArray(body.errors)) output.err(`${compositionErrors(body.errors)}\nRefused: ${oneLine(body.error)}`);
  else output.err(`${body.report === undefined ? '' : `${formatReport(body.report, body.baseVersion ?? null)}\n`}Refused: ${oneLine(body.error)}`);
  return EXIT.verdict;
}

const allowHeader = (config: CliConfig): Record<string, string> => (config.allowBreaking ? { 'x-allow-breaking-changes': 'true' } : {});

/** Publish and rollback answers alike: 201 new version, 200 nothing new, 409 refused by policy. */
function published(answer: Answer, file: string, output: Output): number {
  if (answer.status === 400) return invalid(file, answer, output);
  if (answer.status === 409) return conflict(answer, output);
  if (answer.status !== 200 && answer.status !== 201) return refused(answer, output);
  const body = bodyOf<PublishBody>(answer);
  if (!body.created) {
    output.out(`Unchanged: the schema is version ${body.version.version} already; nothing published.`);
    return EXIT.done;
  }
  output.out(`${formatReport(body.report, body.version.previousVersion)}\nPublished version ${body.version.version} (sha256 ${body.version.sha256}).`);
  return EXIT.done;
}

/** `schema check FILE` and `subgraph check NAME FILE`: a dry run of the publish at `path`. */
async function check(client: RegistryClient, path: string, file: string | undefined, output: Output): Promise<number> {
  const sdl = await readSchema(file);
  const answer = await client.request('POST', `${path}?dryRun=true`, { body: sdl, contentType: 'application/graphql' });
  if (answer.status === 400) return invalid(file!, answer, output);
  if (answer.status === 409) return conflict(answer, output);
  if (answer.status !== 200) return refused(answer, output);
  const body = bodyOf<{ baseVersion: number | null; unchanged: boolean; report: SchemaChangeReport }>(answer);
  output.out(body.unchanged ? `Unchanged: the schema is version ${body.baseVersion} already.` : formatReport(body.report, body.baseVersion));
  if (body.report.counts.breaking === 0) return EXIT.done;
  output.err(`${body.report.counts.breaking} breaking change(s).`);
  return EXIT.verdict;
}

/** `schema publish FILE` and `subgraph publish NAME FILE`: `file` published at `path`. */
async function publish(client: RegistryClient, config: CliConfig, { path, file }: { path: string; file: string | undefined }, output: Output): Promise<number> {
  const sdl = await readSchema(file);
  return published(await client.request('POST', path, { body: sdl, contentType: 'application/graphql', headers: allowHeader(config) }), file!, output);
}

const schemaCheck: Command = (client, config, output) => check(client, '/schema', config.words[2], output);
const schemaPublish: Command = (client, config, output) => publish(client, config, { path: '/schema', file: config.words[2] }, output);

const schemaVersions: Command = async (client, config, output) => {
  const answer = await client.request('GET', `/schema/versions${config.limit === undefined ? '' : `?limit=${config.limit}`}`);
  if (answer.status !== 200) return refused(answer, output);
  const { versions } = bodyOf<{ versions: SchemaVersionInfo[] }>(answer);
  output.out(versions.length === 0 ? 'No versions yet.' : versions.map(formatVersion).join('\n'));
  return EXIT.done;
};

const schemaRollback: Command = async (client, config, output) => {
  const version = Number(config.words[2]);
  if (!Number.isInteger(version) || version < 1) throw new UsageError('schema rollback needs a version number');
  const answer = await client.request('POST', '/schema/rollback', { body: JSON.stringify({ version }), contentType: 'application/json', headers: allowHeader(config) });
  return published(answer, `version ${version}`, output);
};

function nameOf(config: CliConfig): string {
  const name = config.words[2];
  if (name === undefined) throw new UsageError(`graph ${config.words[1]} needs a NAME`);
  return encodeURIComponent(name);
}

const graphSet: Command = async (client, config, output) => {
  const url = config.words[3];
  if (url === undefined) throw new UsageError('graph set needs NAME and URL');
  const answer = await client.request('POST', `/${nameOf(config)}`, { body: url, contentType: 'text/plain' });
  if (answer.status !== 204) return refused(answer, output);
  output.out(`${config.words[2]} → ${url}`);
  return EXIT.done;
};

const graphGet: Command = async (client, config, output) => {
  const answer = await client.request('GET', `/${nameOf(config)}`);
  if (answer.status !== 200) return refused(answer, output);
  output.out(answer.text);
  return EXIT.done;
};

const graphList: Command = async (client, _config, output) => {
  const answer = await client.request('GET', '/');
  if (answer.status !== 200) return refused(answer, output);
  const { graphs } = bodyOf<{ graphs: Record<string, string> }>(answer);
  output.out(Object.entries(graphs).map(([name, url]) => `${name}\t${url}`).join('\n') || 'No graphs.');
  return EXIT.done;
};

const graphDelete: Command = async (client, config, output) => {
  const answer = await client.request('DELETE', `/${nameOf(config)}`);
  if (answer.status !== 204) return refused(answer, output);
  output.out(`${config.words[2]} deleted`);
  return EXIT.done;
};

const subgraphCheck: Command = (client, config, output) => check(client, `/${nameOf(config)}/schema`, config.words[3], output);
const subgraphPublish: Command = (client, config, output) => publish(client, config, { path: `/${nameOf(config)}/schema`, file: config.words[3] }, output);

/** The subgraphs of the newest supergraph: name, schema version, routing URL. */
const subgraphList: Command = async (client, _config, output) => {
  const answer = await client.request('GET', '/supergraph/versions?limit=1');
  if (answer.status !== 200) return refused(answer, output);
  const [newest] = bodyOf<{ versions: Array<{ version: number; subgraphs: Array<{ name: string; version: number; url: string }> }> }>(answer).versions;
  const members = newest?.subgraphs ?? [];
  output.out(members.length === 0 ? 'No subgraphs.' : members.map((member) => `${member.name}\tv${member.version}\t${member.url}`).join('\n'));
  return EXIT.done;
};

const subgraphRemove: Command = async (client, config, output) => {
  const answer = await client.request('DELETE', `/${nameOf(config)}/schema`, { headers: allowHeader(config) });
  if (answer.status === 409) return conflict(answer, output);
  if (answer.status !== 204) return refused(answer, output);
  output.out(`${config.words[2]}: its subgraph left the supergraph`);
  return EXIT.done;
};

/** The supergraph SDL (newest, or version N) on stdout, as a gateway would read it. */
const supergraphFetch: Command = async (client, config, output) => {
  const version = config.words[2];
  if (version !== undefined && !/^[1-9][0-9]*$/.test(version)) throw new UsageError('supergraph fetch takes a version number');
  const answer = await client.request('GET', `/supergraph${version === undefined ? '' : `?version=${version}`}`);
  if (answer.status !== 200) return refused(answer, output);
  output.out(answer.text);
  return EXIT.done;
};

const COMMANDS: Readonly<Record<string, Command>> = {
  'subgraph check': subgraphCheck,
  'subgraph publish': subgraphPublish,
  'subgraph list': subgraphList,
  'subgraph remove': subgraphRemove,
  'supergraph fetch': supergraphFetch,
  'schema check': schemaCheck,
  'schema publish': schemaPublish,
  'schema versions': schemaVersions,
  'schema rollback': schemaRollback,
  'graph set': graphSet,
  'graph get': graphGet,
  'graph list': graphList,
  'graph delete': graphDelete,
};

/** Runs the command the words name; a UsageError for words that name none. */
export function commandOf(config: CliConfig): Command {
  const command = COMMANDS[config.words.slice(0, 2).join(' ')];
  if (command === undefined) throw new UsageError(`unknown command: ${config.words.join(' ')}`);
  return command;
}
