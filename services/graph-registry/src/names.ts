import { badRequest } from '@sp/platform';

/** What a graph name may look like: lowercase, 1 to 63 characters, DNS-label-like. */
export const NAME_PATTERN = /^[a-z0-9]([a-z0-9._-]{0,62})$/;

/** Paths of their own, so never graph names (the record `graph:schema` holds the schema). */
export const RESERVED_NAMES: ReadonlySet<string> = new Set(['schema', 'health']);

export function isGraphName(name: string): boolean {
  return NAME_PATTERN.test(name) && !RESERVED_NAMES.has(name);
}

/** Returns the name when it is usable, or throws a 400 saying why not. */
export function validateName(name: string | undefined): string {
  if (name === undefined || !NAME_PATTERN.test(name)) throw badRequest(`invalid name: must match ${NAME_PATTERN.source}`);
  if (RESERVED_NAMES.has(name)) throw badRequest(`invalid name: "${name}" is reserved`);
  return name;
}
