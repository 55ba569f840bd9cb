import { parseArgs } from 'node:util';

/** Where the registry is and how to authenticate, from flags first, then the environment. */
export interface CliConfig {
  url: string;
  key: string;
  allowBreaking: boolean;
  limit: number | undefined;
  /** How long one request may take, its whole answer read (--timeout, in seconds on the command line). */
  timeoutMs: number;
  /** The command and its arguments, e.g. `['schema', 'check', 'schema.graphql']`. */
  words: string[];
}

/** The command line is not one the command takes (exit status 2); an empty message asks for the usage alone (--help, exit status 0). */
export class UsageError extends Error {}

export const USAGE = `Usage: graph-registry [--url URL] [--key KEY] COMMAND

Commands:
  schema check FILE                 compare FILE with the newest version, store nothing
                                    (exit 1 when it is invalid or has breaking changes)
  schema publish FILE [--allow-breaking]
                                    publish FILE as a new version (exit 1 when refused)
  schema versions [--limit N]       list versions, newest first
  schema rollback N [--allow-breaking]
                                    publish version N's schema again as a new version
  graph set NAME URL | graph get NAME | graph list | graph delete NAME
  subgraph check NAME FILE          compose FILE as graph NAME's subgraph with the others, store
                                    nothing (exit 1 when it does not compose or breaks the API)
  subgraph publish NAME FILE [--allow-breaking]
                                    publish FILE as NAME's subgraph schema (exit 1 when refused)
  subgraph list                     the subgraphs of the newest supergraph
  subgraph remove NAME [--allow-breaking]
                                    take NAME's subgraph out of the supergraph
  supergraph fetch [N]              the supergraph SDL (newest, or version N)

Options:
  --url URL      registry address (or GRAPH_REGISTRY_URL)
  --key KEY      API key (or GRAPH_REGISTRY_API_KEY; safer than a flag, which others may see)
  --allow-breaking   send X-Allow-Breaking-Changes: true
  --limit N      versions to list (1-100)
  --timeout S    seconds one request may take, its whole answer read (or GRAPH_REGISTRY_TIMEOUT;
                 default 30)

Exit status:
  0  done
  1  the schema is invalid, has breaking changes (check), does not compose (subgraph) or
     was refused by the registry, or the name or version does not exist
  2  usage error or unreadable FILE
  3  the registry refused the API key (401)
  4  cannot connect to the registry (refused, unknown host, TLS)
  5  no complete answer within the timeout
  6  the connection ended before the answer was complete
  7  the registry, or a proxy in front of it, failed (5xx)
  8  an answer that is not the registry's (e.g. a proxy's HTML page, malformed JSON)
  9  internal error of the command
Failures other than 1 print one line on stderr.`;

/** --timeout's default, in seconds. */
export const DEFAULT_TIMEOUT_SECONDS = 30;

function parse(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: { url: { type: 'string' }, key: { type: 'string' }, 'allow-breaking': { type: 'boolean' }, limit: { type: 'string' }, timeout: { type: 'string' }, help: { type: 'boolean' } },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

function limitOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const limit = Number(value);
  if (!(Number.isInteger(limit) && limit >= 1 && limit <= 100)) throw new UsageError('--limit must be an integer from 1 to 100');
  return limit;
}

/** Seconds (a decimal number, more than 0 and at most an hour) as milliseconds. */
function timeoutOf(value: string | undefined): number {
  if (value === undefined) return DEFAULT_TIMEOUT_SECONDS * 1000;
  const seconds = /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!(seconds > 0 && seconds <= 3600)) throw new UsageError('--timeout (or GRAPH_REGISTRY_TIMEOUT) must be a number of seconds, more than 0 and at most 3600');
  return Math.ceil(seconds * 1000);
}

function connection(values: { url?: string | undefined; key?: string | undefined }, environment: NodeJS.ProcessEnv): { url: string; key: string } {
  const url = values.url ?? environment.GRAPH_REGISTRY_URL;
  const key = values.key ?? environment.GRAPH_REGISTRY_API_KEY;
  if (url === undefined || !/^https?:\/\/./.test(url)) throw new UsageError('the registry URL is missing or not http(s): --url or GRAPH_REGISTRY_URL');
  if (key === undefined || key === '') throw new UsageError('the API key is missing: --key or GRAPH_REGISTRY_API_KEY');
  return { url: url.replace(/\/+$/, ''), key };
}

/** The command line and the environment, checked: every problem is a UsageError (exit 2). */
export function loadCliConfig(argv: readonly string[], environment: NodeJS.ProcessEnv = process.env): CliConfig {
  const { values, positionals } = parse(argv);
  if (values.help === true) throw new UsageError('');
  if (positionals.length === 0) throw new UsageError('a COMMAND is needed');
  return {
    ...connection(values, environment),
    allowBreaking: values['allow-breaking'] === true,
    limit: limitOf(values.limit),
    timeoutMs: timeoutOf(values.timeout ?? (environment.GRAPH_REGISTRY_TIMEOUT === '' ? undefined : environment.GRAPH_REGISTRY_TIMEOUT)),
    words: positionals,
  };
}
