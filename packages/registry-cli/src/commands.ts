import { readFile } from 'node:fs/promises';
import { UsageError, type CliConfig } from './config.ts';
import { errorOf, type Answer, type RegistryClient } from './registry-client.ts';
import type { SchemaChangeReport, SchemaVersionInfo } from '@sp/platform';
import { formatProblems, formatReport, formatVersion, type Problem } from './report-format.ts';

/** Where a command writes; exit status 0 (done) or 1 (refused, invalid, breaking, not found). */
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

/** Any answer a command has no use for: its error, exit status 1. */
function refused(answer: Answer, output: Output): number {
  output.err(`refused: ${answer.status} ${errorOf(answer.json) ?? answer.text}`);
  return 1;
}

function invalid(file: string, answer: Answer, output: Output): number {
  output.err(formatProblems(file, (answer.json as { problems?: Problem[] }).problems ?? [{ message: errorOf(answer.json) ?? answer.text, locations: [] }]));
  return 1;
}

const allowHeader = (config: CliConfig): Record<string, string> => (config.allowBreaking ? { 'x-allow-breaking-changes': 'true' } : {});

/** Publish and rollback answers alike: 201 new version, 200 nothing new, 409 refused by policy. */
function published(answer: Answer, file: string, output: Output): number {
  if (answer.status === 400) return invalid(file, answer, output);
  if (answer.status === 409) {
    const body = answer.json as { error: string; baseVersion: number | null; report: SchemaChangeReport };
    output.err(`${formatReport(body.report, body.baseVersion)}\nRefused: ${body.error}`);
    return 1;
  }
  if (answer.status !== 200 && answer.status !== 201) return refused(answer, output);
  const body = answer.json as PublishBody;
  if (!body.created) {
    output.out(`Unchanged: the schema is version ${body.version.version} already; nothing published.`);
    return 0;
  }
  output.out(`${formatReport(body.report, body.version.previousVersion)}\nPublished version ${body.version.version} (sha256 ${body.version.sha256}).`);
  return 0;
}

const schemaCheck: Command = async (client, config, output) => {
  const file = config.words[2];
  const sdl = await readSchema(file);
  const answer = await client.request('POST', '/schema?dryRun=true', { body: sdl, contentType: 'application/graphql' });
  if (answer.status === 400) return invalid(file!, answer, output);
  if (answer.status !== 200) return refused(answer, output);
  const body = answer.json as { baseVersion: number | null; unchanged: boolean; report: SchemaChangeReport };
  output.out(body.unchanged ? `Unchanged: the schema is version ${body.baseVersion} already.` : formatReport(body.report, body.baseVersion));
  if (body.report.counts.breaking === 0) return 0;
  output.err(`${body.report.counts.breaking} breaking change(s).`);
  return 1;
};

const schemaPublish: Command = async (client, config, output) => {
  const file = config.words[2];
  const sdl = await readSchema(file);
  return published(await client.request('POST', '/schema', { body: sdl, contentType: 'application/graphql', headers: allowHeader(config) }), file!, output);
};

const schemaVersions: Command = async (client, config, output) => {
  const answer = await client.request('GET', `/schema/versions${config.limit === undefined ? '' : `?limit=${config.limit}`}`);
  if (answer.status !== 200) return refused(answer, output);
  const { versions } = answer.json as { versions: SchemaVersionInfo[] };
  output.out(versions.length === 0 ? 'No versions yet.' : versions.map(formatVersion).join('\n'));
  return 0;
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
  return 0;
};

const graphGet: Command = async (client, config, output) => {
  const answer = await client.request('GET', `/${nameOf(config)}`);
  if (answer.status !== 200) return refused(answer, output);
  output.out(answer.text);
  return 0;
};

const graphList: Command = async (client, _config, output) => {
  const answer = await client.request('GET', '/');
  if (answer.status !== 200) return refused(answer, output);
  const { graphs } = answer.json as { graphs: Record<string, string> };
  output.out(Object.entries(graphs).map(([name, url]) => `${name}\t${url}`).join('\n') || 'No graphs.');
  return 0;
};

const graphDelete: Command = async (client, config, output) => {
  const answer = await client.request('DELETE', `/${nameOf(config)}`);
  if (answer.status !== 204) return refused(answer, output);
  output.out(`${config.words[2]} deleted`);
  return 0;
};

const COMMANDS: Readonly<Record<string, Command>> = {
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
