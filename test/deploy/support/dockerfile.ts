import { readFileSync } from 'node:fs';

/**
 * A small reader of the services' Dockerfile: instructions with their continuation lines
 * joined, grouped into stages, with ARG values substituted the way docker build does.
 */

export interface Instruction {
  keyword: string;
  /** The rest of the line, continuations joined. */
  args: string;
  line: number;
}

export interface Stage {
  name: string | undefined;
  /** The image or the earlier stage it starts from. */
  from: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  /** ARGs declared before the first FROM, with their defaults. */
  globalArgs: Record<string, string>;
  stages: Stage[];
  text: string;
}

export function parseDockerfile(path: string): Dockerfile {
  const text = readFileSync(path, 'utf8');
  const instructions: Instruction[] = [];
  let pending: { text: string; line: number } | undefined;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trimEnd();
    if (pending === undefined && (line.trim() === '' || line.trimStart().startsWith('#'))) return;
    if (pending !== undefined && line.trimStart().startsWith('#')) return; // comment inside a continuation
    const joined = pending === undefined ? { text: line, line: index + 1 } : { text: `${pending.text} ${line.trim()}`, line: pending.line };
    if (joined.text.endsWith('\\')) {
      pending = { text: joined.text.slice(0, -1).trimEnd(), line: joined.line };
      return;
    }
    pending = undefined;
    const match = /^\s*([A-Za-z]+)\s+(.*)$/.exec(joined.text);
    if (match) instructions.push({ keyword: match[1]!.toUpperCase(), args: match[2]!.trim(), line: joined.line });
  });
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const [from, as, name] = instruction.args.split(/\s+/);
      stages.push({ from: from!, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else if (stages.length === 0) {
      if (instruction.keyword !== 'ARG') throw new Error(`${path}:${instruction.line}: only ARG may come before FROM`);
      const [key, value] = instruction.args.split('=');
      globalArgs[key!] = value ?? '';
    } else {
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return { globalArgs, stages, text };
}

/** `${NAME}` and `$NAME` replaced from the variables (as docker does in FROM, COPY, WORKDIR...). */
export function substitute(text: string, variables: Record<string, string>): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (whole, braced: string | undefined, bare: string | undefined) => variables[braced ?? bare ?? ''] ?? whole);
}

/** The ARGs in scope of a stage: its own ARG lines, defaulting to the global ones, then build args. */
export function stageArgs(file: Dockerfile, stage: Stage, buildArgs: Record<string, string> = {}): Record<string, string> {
  const args: Record<string, string> = {};
  for (const instruction of stage.instructions.filter((i) => i.keyword === 'ARG')) {
    const [key, value] = instruction.args.split('=');
    args[key!] = buildArgs[key!] ?? value ?? file.globalArgs[key!] ?? '';
  }
  return args;
}

/** The JSON array of an exec-form instruction (ENTRYPOINT, CMD), or undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  try {
    const parsed = JSON.parse(args) as unknown;
    return Array.isArray(parsed) && parsed.every((item) => typeof item === 'string') ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Patterns of a .dockerignore as a matcher of context-relative paths (`**`, `*`, exact names). */
export function dockerignore(path: string): (relative: string) => boolean {
  const patterns = readFileSync(path, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((pattern) => {
      const source = pattern
        .replace(/^\/+/, '')
        .split('/')
        .map((part) => (part === '**' ? '(?:.*/)?' : `${part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')}/`))
        .join('')
        .replace(/\/$/, '');
      return new RegExp(`^${source.replace(/\(\?:\.\*\/\)\?\//g, '(?:.*/)?')}(?:/.*)?$`);
    });
  return (relative) => patterns.some((pattern) => pattern.test(relative));
}
