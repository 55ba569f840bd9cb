import { parse } from 'yaml';
import { cell, prose, table } from './sections.js';

interface Param {
  key: string;
  description: string;
}

interface Section {
  title: string;
  notes: string[];
  params: Param[];
}

type Tree = Record<string, unknown>;

const isObject = (value: unknown): value is Tree => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The `## @section`, its `##` notes and its `## @param key description` lines, in file order (the house style's metadata). */
function sectionsOf(text: string): Section[] {
  const sections: Section[] = [];
  for (const line of text.split('\n')) {
    const section = /^## @section\s+(.+)$/.exec(line);
    const param = /^## @param\s+(\S+)\s*(.*)$/.exec(line);
    const note = /^## (?!@)(.*)$/.exec(line);
    if (section) sections.push({ title: section[1]!.trim(), notes: [], params: [] });
    else if (param) (sections.at(-1) ?? (sections[0] = { title: 'Parameters', notes: [], params: [] })).params.push({ key: param[1]!, description: param[2]!.trim() });
    else if (note && sections.at(-1)?.params.length === 0) sections.at(-1)!.notes.push(note[1]!.trim());
  }
  return sections;
}

/**
 * The value at a dotted key; a key of the YAML may itself hold dots (`app.kubernetes.io/name`), so
 * at each level the shortest run of parts naming an existing key is taken.
 */
function valueAt(tree: unknown, key: string): { found: boolean; value?: unknown } {
  const parts = key.split('.');
  let node: unknown = tree;
  for (let i = 0; i < parts.length; ) {
    if (!isObject(node)) return { found: false };
    let next = i + 1;
    while (next <= parts.length && !(parts.slice(i, next).join('.') in node)) next += 1;
    if (next > parts.length) return { found: false };
    node = node[parts.slice(i, next).join('.')];
    i = next;
  }
  return { found: true, value: node };
}

/** Every leaf of the values (a scalar, a list, an empty map), by dotted key. */
function leavesOf(tree: unknown, prefix = ''): string[] {
  if (!isObject(tree) || Object.keys(tree).length === 0) return [prefix];
  return Object.entries(tree).flatMap(([key, value]) => leavesOf(value, prefix === '' ? key : `${prefix}.${key}`));
}

/** A default as the values file holds it, on one line. */
function shown(value: unknown): string {
  if (value === null) return '`null`';
  if (typeof value === 'string') return value === '' ? '`""`' : `\`${value}\``;
  if (typeof value === 'number' || typeof value === 'boolean') return `\`${String(value)}\``;
  return `\`${JSON.stringify(value)}\``;
}

/**
 * The parameter tables of a chart's values.yaml, one per `@section`, and the problems: a value with
 * no `@param` on it or on a map above it, a `@param` naming no value, a `@param` without description.
 */
export function valuesTables(text: string, headingLevel = '###'): { markdown: string; problems: string[] } {
  const values = parse(text) as unknown;
  const sections = sectionsOf(text);
  const params = sections.flatMap((section) => section.params);
  const problems: string[] = [];
  for (const { key, description } of params) {
    if (!valueAt(values, key).found) problems.push(`@param ${key}: no such value`);
    if (description === '') problems.push(`@param ${key}: no description`);
  }
  const documented = (leaf: string): boolean => params.some(({ key }) => leaf === key || leaf.startsWith(`${key}.`));
  for (const leaf of leavesOf(values).filter((leaf) => leaf !== '' && !documented(leaf))) problems.push(`${leaf}: no @param`);
  const markdown = sections
    .map(({ title, notes, params: rows }) =>
      [`${headingLevel} ${title}`, ...(notes.length > 0 ? [prose(notes.join(' '))] : []), table(['Name', 'Description', 'Default'], rows.map(({ key, description }) => [`\`${key}\``, cell(description), cell(shown(valueAt(values, key).value))]))].join('\n\n'),
    )
    .join('\n\n');
  return { markdown, problems };
}
