/**
 * The graph registry's name rule, shared by the registry (which answers 400) and the controller
 * (which reports the annotation as invalid): lowercase, 1 to 63 characters, DNS-label-like.
 */
export const GRAPH_NAME_PATTERN = /^[a-z0-9]([a-z0-9._-]{0,62})$/;

/**
 * Paths of the registry's own, so never graph names (the record `graph:schema` holds the schema;
 * `/supergraph` and `/artifacts/…` serve the composed supergraph).
 */
export const RESERVED_GRAPH_NAMES: ReadonlySet<string> = new Set(['schema', 'health', 'supergraph', 'artifacts']);

/** Why `name` cannot be a graph name (`pattern`: it does not match the pattern; `reserved`), or undefined when it can. */
export function graphNameProblem(name: string | undefined): 'pattern' | 'reserved' | undefined {
  if (name === undefined || !GRAPH_NAME_PATTERN.test(name)) return 'pattern';
  return RESERVED_GRAPH_NAMES.has(name) ? 'reserved' : undefined;
}
