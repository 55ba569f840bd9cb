import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { operationsEnv } from '@sp/core';
import { valuesTables } from './chart-values.js';
import { sectionOf, withSection } from './sections.js';
import { settingsTable, type Settings } from './settings.js';

/** One generated section: which file, which section, and its text (or why it cannot be made). */
export interface Target {
  file: string;
  section: string;
  source: string;
  render(): Promise<{ markdown: string; problems: string[] }>;
}

/** Names that look like settings but are none: retired ones the documentation mentions to say they are gone, and the pattern. */
export const NOT_SETTINGS: readonly string[] = ['Auth__SessionCacheMs', 'Section__Key' /* the naming pattern itself */];

const SETTING_NAME = /\b[A-Z][A-Za-z0-9]*(?:__[A-Za-z0-9]+)+\b/g;

const dirs = (root: string, path: string): string[] =>
  existsSync(join(root, path)) ? readdirSync(join(root, path), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort() : [];

/** A service's declared settings: the `settings` export of its `src/config.ts`. */
export async function settingsOf(root: string, service: string): Promise<Settings> {
  const module = (await import(pathToFileURL(join(root, 'services', service, 'src/config.ts')).href)) as { settings?: Settings };
  if (module.settings === undefined) throw new Error('exports no `settings` (every variable, declared once with .describe())');
  return module.settings;
}

/** Every generated section of the repository: settings tables from each `config.ts`, values tables from each chart's values.yaml. */
export function targets(root: string): Target[] {
  const common = Object.keys(operationsEnv);
  const services = dirs(root, 'services').filter((name) => existsSync(join(root, 'services', name, 'src/config.ts')));
  const charts = ['charts/subscription-platform', ...dirs(root, 'charts/subscription-platform/charts').map((name) => `charts/subscription-platform/charts/${name}`)].filter((dir) =>
    existsSync(join(root, dir, 'values.yaml')),
  );
  return [
    { file: 'README.md', section: 'settings:common', source: 'packages/core/src/config.ts (`operationsEnv`)', render: () => Promise.resolve(settingsTable(operationsEnv)) },
    ...services.map((service) => ({
      file: `services/${service}/README.md`,
      section: 'settings',
      source: `services/${service}/src/config.ts`,
      render: async () => settingsTable(await settingsOf(root, service), common),
    })),
    ...charts.map((dir) => ({
      file: `${dir}/README.md`,
      section: 'values',
      source: `${dir}/values.yaml`,
      render: () => Promise.resolve(valuesTables(readFileSync(join(root, dir, 'values.yaml'), 'utf8'))),
    })),
  ];
}

/** The files the documentation is written in, for the mentions check. */
function docFiles(root: string, dir = ''): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) return ['node_modules', 'dist', '.cache', '.git', 'coverage'].includes(entry.name) ? [] : docFiles(root, path);
    return /\.md$|(^|\/)values\.yaml$/.test(entry.name) && entry.name !== 'CHANGELOG.md' ? [path] : [];
  });
}

/** `Section__Key` names the documentation mentions that no service declares ("documented but gone"). */
export async function unknownMentions(root: string): Promise<string[]> {
  const known = new Set<string>([...Object.keys(operationsEnv), ...NOT_SETTINGS]);
  for (const service of dirs(root, 'services').filter((name) => existsSync(join(root, 'services', name, 'src/config.ts')))) {
    Object.keys(await settingsOf(root, service).catch(() => ({}))).forEach((name) => known.add(name));
  }
  return docFiles(root).flatMap((file) => {
    const names = new Set(readFileSync(join(root, file), 'utf8').match(SETTING_NAME) ?? []);
    return [...names].filter((name) => !known.has(name)).map((name) => `${file}: mentions ${name}, which no services/*/src/config.ts declares`);
  });
}

/** Each target file's text with its sections regenerated, and the problems: found on the way, or settings named but not declared. */
export async function generate(root: string): Promise<{ files: Map<string, { before: string; after: string }>; problems: string[] }> {
  const files = new Map<string, { before: string; after: string }>();
  const problems: string[] = [];
  for (const target of targets(root)) {
    const path = join(root, target.file);
    if (!existsSync(path)) {
      problems.push(`${target.file}: missing (it needs a "docs:${target.section}" section)`);
      continue;
    }
    const entry = files.get(target.file) ?? { before: readFileSync(path, 'utf8'), after: readFileSync(path, 'utf8') };
    files.set(target.file, entry);
    const found = sectionOf(entry.after, target.section);
    if ('problem' in found) {
      problems.push(`${target.file}: ${found.problem}`);
      continue;
    }
    const rendered = await target.render().catch((err: unknown) => ({ markdown: undefined, problems: [err instanceof Error ? err.message : String(err)] }));
    problems.push(...rendered.problems.map((problem) => `${target.source}: ${problem}`));
    if (rendered.markdown !== undefined) entry.after = withSection(entry.after, target.section, rendered.markdown, target.source);
  }
  problems.push(...(await unknownMentions(root)));
  return { files, problems: problems.map((problem) => problem.replace(`${root}/`, '')) };
}

/** The files (relative to the root) whose generated sections differ from what `generate` makes. */
export const outOfDate = (files: Map<string, { before: string; after: string }>): string[] => [...files].filter(([, { before, after }]) => before !== after).map(([file]) => file);
