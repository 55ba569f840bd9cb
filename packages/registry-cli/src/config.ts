import { parseArgs } from 'node:util';

/** Where the registry is and how to authenticate, from flags first, then the environment. */
export interface CliConfig {
  url: string;
  key: string;
  allowBreaking: boolean;
  limit: number | undefined;
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

Options:
  --url URL      registry address (or GRAPH_REGISTRY_URL)
  --key KEY      API key (or GRAPH_REGISTRY_API_KEY; safer than a flag, which others may see)
  --allow-breaking   send X-Allow-Breaking-Changes: true
  --limit N      versions to list (1-100)

Exit status: 0 done; 1 the schema is invalid, has breaking changes (check) or was refused,
or the name or version does not exist; 2 usage error, wrong key, registry unreachable or failing.`;

function parse(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: { url: { type: 'string' }, key: { type: 'string' }, 'allow-breaking': { type: 'boolean' }, limit: { type: 'string' }, help: { type: 'boolean' } },
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
  return { ...connection(values, environment), allowBreaking: values['allow-breaking'] === true, limit: limitOf(values.limit), words: positionals };
}
