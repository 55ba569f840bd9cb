import type { z } from 'zod';
import { cell, table } from './sections.js';

/** The variables of a service as its `src/config.ts` declares them: name → zod schema with `.describe()`. */
export type Settings = Readonly<Record<string, z.ZodType>>;

/** What a setting is when unset, for the table: required, nothing, or its default as an operator writes it. */
export function defaultOf(schema: z.ZodType): string {
  const unset = schema.safeParse(undefined);
  if (!unset.success) return 'required';
  const value: unknown = unset.data;
  if (value === undefined) return '–';
  const items = value instanceof Set || Array.isArray(value) ? [...(value as Iterable<unknown>)] : undefined;
  if (items !== undefined) return items.length === 0 ? '–' : `\`${items.map(String).join(',')}\``;
  const scalar = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
  return `\`${scalar ? String(value) : JSON.stringify(value)}\``;
}

/**
 * The settings table of `settings` (in declaration order), leaving out `exclude` (the variables
 * every service shares, documented once); a setting without a description is a problem.
 */
export function settingsTable(settings: Settings, exclude: readonly string[] = []): { markdown: string; problems: string[] } {
  const problems: string[] = [];
  const rows = Object.entries(settings)
    .filter(([name]) => !exclude.includes(name))
    .map(([name, schema]) => {
      const description = schema.description?.trim() ?? '';
      if (description === '') problems.push(`${name}: no description (add .describe('…') to its declaration)`);
      return [`\`${name}\``, defaultOf(schema), cell(description)];
    });
  return { markdown: table(['Variable', 'Default', 'Meaning'], rows), problems };
}
