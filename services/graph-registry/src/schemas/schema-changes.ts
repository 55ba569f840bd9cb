import { BreakingChangeType, DangerousChangeType, findSchemaChanges, resolveSchemaCoordinate, type GraphQLSchema, type SchemaChange } from 'graphql';

import type { SchemaChangeClass, SchemaChangeCounts, SchemaChangeReport } from '@sp/graphs';

export const emptyReport = (): SchemaChangeReport => ({ changes: [], counts: { breaking: 0, dangerous: 0, safe: 0 } });

/**
 * graphql-js' own classes: findBreakingChanges and findDangerousChanges keep the changes whose
 * type is in these enums; every other change of findSchemaChanges is safe.
 */
function classOf(change: SchemaChange): SchemaChangeClass {
  if (change.type in BreakingChangeType) return 'breaking';
  if (change.type in DangerousChangeType) return 'dangerous';
  return 'safe';
}

/** Words of a message that read as schema coordinates: `Type`, `Type.field`, `Type.field(arg:)`, `@dir`, `@dir(arg:)`. */
const COORDINATE = /@?[_A-Za-z][_0-9A-Za-z]*(?:\.[_A-Za-z][_0-9A-Za-z]*)?(?:\([_A-Za-z][_0-9A-Za-z]*:\))?/g;

/** Changes whose message names the member first and the type it belongs to last. */
const CONTAINER_LAST: ReadonlySet<string> = new Set(['TYPE_ADDED_TO_UNION', 'TYPE_REMOVED_FROM_UNION', 'IMPLEMENTED_INTERFACE_ADDED']);

const specificity = (coordinate: string): number => (coordinate.includes('(') ? 3 : 0) + (coordinate.includes('.') ? 2 : 0) + (coordinate.startsWith('@') ? 1 : 0);

function resolves(schemas: readonly GraphQLSchema[], coordinate: string): boolean {
  return schemas.some((schema) => {
    try {
      return resolveSchemaCoordinate(schema, coordinate) !== undefined;
    } catch {
      return false;
    }
  });
}

/**
 * The coordinate a change is about. graphql-js writes it into its messages (`Field
 * Query.user was removed.`) but does not return it: the most specific word of the message that
 * resolves in the old or the new schema (for union members and interfaces, the type they belong to).
 */
function coordinateOf(change: SchemaChange, schemas: readonly GraphQLSchema[]): string | null {
  const candidates = (change.description.match(COORDINATE) ?? []).filter((word) => resolves(schemas, word));
  if (candidates.length === 0) return null;
  if (CONTAINER_LAST.has(change.type)) return candidates[candidates.length - 1]!;
  return candidates.reduce((best, word) => (specificity(word) > specificity(best) ? word : best));
}

/** Every change from `before` to `after`, classified, breaking first, in graphql-js' order within a class. */
export function compareSchemas(before: GraphQLSchema, after: GraphQLSchema): SchemaChangeReport {
  const order: Record<SchemaChangeClass, number> = { breaking: 0, dangerous: 1, safe: 2 };
  const changes = findSchemaChanges(before, after)
    .map((change) => ({ class: classOf(change), kind: change.type, coordinate: coordinateOf(change, [after, before]), message: change.description }))
    .sort((a, b) => order[a.class] - order[b.class]);
  const counts: SchemaChangeCounts = { breaking: 0, dangerous: 0, safe: 0 };
  for (const change of changes) counts[change.class] += 1;
  return { changes, counts };
}
