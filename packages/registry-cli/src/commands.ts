import { readFile } from 'node:fs/promises';
import { UsageError, type CliConfig } from './config.ts';
import { EXIT } from './exit-status.ts';
import { bodyOf, errorOf, oneLine, type Answer, type RegistryClient } from './registry-client.ts';
import type { SchemaChangeReport, SchemaVersionInfo } from '@sp/platform';
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

const allowHeader = (config: CliConfig): Record<string, string> => (config.allowBreaking ? { 'x-allow-breaking-changes': 'true' } : {});

/** Publish and rollback answers alike: 201 new version, 200 nothing new, 409 refused by policy. */
function published(answer: Answer, file: string, output: Output): number {
  if (answer.status === 400) return invalid(file, answer, output);
  if (answer.status === 409) {
    const body = bodyOf<{ error: string; baseVersion: number | null; report: SchemaChangeReport }>(answer);
    output.err(`${formatReport(body.report, body.baseVersion)}\nRefused: ${oneLine(body.error)}`);
    return EXIT.verdict;
  }
  if (answer.status !== 200 && answer.status !== 201) return refused(answer, output);
  const body = bodyOf<PublishBody>(answer);
  if (!body.created) {
    output.out(`Unchanged: the schema is version ${body.version.version} already; nothing published.`);
    return EXIT.done;
  }
  output.out(`${formatReport(body.report, body.version.previousVersion)}\nPublished version ${body.version.version} (sha256 ${body.version.sha256}).`);
  return EXIT.done;
}

const schemaCheck: Command = async (client, config, output) => {
  const file = config.words[2];
  const sdl = await readSchema(file);
  const answer = await client.request('POST', '/schema?dryRun=true', { body: sdl, contentType: 'application/graphql' });
  if (answer.status === 400) return invalid(file!, answer, output);
  if (answer.status !== 200) return refused(answer, output);
  const body = bodyOf<{ baseVersion: number | null; unchanged: boolean; report: SchemaChangeReport }>(answer);
  output.out(body.unchanged ? `Unchanged: the schema is version ${body.baseVersion} already.` : formatReport(body.report, body.baseVersion));
  if (body.report.counts.breaking === 0) return EXIT.done;
  output.err(`${body.report.counts.breaking} breaking change(s).`);
  return EXIT.verdict;
};

const schemaPublish: Command = async (client, config, output) => {
  const file = config.words[2];
  const sdl = await readSchema(file);
  return published(await client.request('POST', '/schema', { body: sdl, contentType: 'application/graphql', headers: allowHeader(config) }), file!, output);
};

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
