import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const repoRoot = join(import.meta.dirname, '../../..');

/** The services the charts deploy, by chart name (the same as their services/<name> folder). */
export const services = ['cache', 'auth', 'graph-registry', 'webhooks', 'graph-controller'] as const;
export type Service = (typeof services)[number];

export interface ConfigVariables {
  /** Every variable the service's config.ts reads. */
  all: Set<string>;
  /** Those without a default and not optional: the service refuses to start without them. */
  required: Set<string>;
}

const HAS_DEFAULT = /\.default\(|\.optional\(\)|env\.port\(\d|env\.positiveInt\(|env\.bool\(|seconds\(\d/;

/** Keys of a schema object (values are schema builders: env.*, z.*, httpUrl(), ...), required or not. */
function parseVariables(lines: readonly string[], into: ConfigVariables): void {
  let current: { name: string; text: string; indent: number } | undefined;
  const close = (): void => {
    if (current && !HAS_DEFAULT.test(current.text)) into.required.add(current.name);
    current = undefined;
  };
  for (const line of lines) {
    const key = /^(\s+)([A-Za-z_][A-Za-z0-9_]*):\s+(env\b|z\b|httpUrl\(|seconds\()(.*)$/.exec(line);
    const indent = /^\s*/.exec(line)![0].length;
    if (key) {
      close();
      into.all.add(key[2]!);
      current = { name: key[2]!, text: `${key[3]}${key[4]}`, indent: key[1]!.length };
    } else if (current && line.trim() !== '' && indent <= current.indent) {
      // Back at (or out of) the key's level: the end of a multi-line value (`}).optional(),`),
      // the next key or the end of the schema object.
      if (/^\s*[)}\]]\)?\./.test(line)) current.text += line;
      close();
    } else if (current) {
      current.text += line;
    }
  }
  close();
}

/** The lines of `export const NAME = { ... };` in the platform kit's sources (shared variable sets). */
function sharedObject(name: string): string[] {
  const dir = join(repoRoot, 'packages/platform/src');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const lines = readFileSync(join(dir, file), 'utf8').split('\n');
    const start = lines.findIndex((line) => line.startsWith(`export const ${name} = {`));
    if (start < 0) continue;
    const end = lines.findIndex((line, i) => i > start && /^\};?\s*$/.test(line));
    return lines.slice(start + 1, end);
  }
  throw new Error(`...${name} is spread into a config schema but no platform source exports it`);
}

/**
 * The variables a service reads, from its src/config.ts (the only reader of the environment),
 * with the shared sets it spreads in (`...operationsEnv` from the platform kit). Undefined while
 * the service has no config.ts yet.
 */
export function configVariables(service: Service): ConfigVariables | undefined {
  const file = join(repoRoot, 'services', service, 'src/config.ts');
  if (!existsSync(file)) return undefined;
  const lines = readFileSync(file, 'utf8').split('\n');
  const variables: ConfigVariables = { all: new Set(), required: new Set() };
  parseVariables(lines, variables);
  for (const spread of lines.flatMap((line) => [.../^\s+\.\.\.([A-Za-z_][A-Za-z0-9_]*),?\s*$/.exec(line) ?? []].slice(1))) {
    parseVariables(sharedObject(spread), variables);
  }
  return variables;
}
