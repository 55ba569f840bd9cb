import { describe, expect, it } from '@jest/globals';
import { buildSchema } from 'graphql';
import type { SchemaChangeClass } from '@sp/graphs';
import { compareSchemas } from '../src/schemas/schema-changes.js';

/** The schema every row changes one thing of. */
const BASE = {
  query: 'type Query { user(id: ID, first: Int = 10): User  search: [SearchResult!]!  order: Order  role: Role }',
  user: '"""A person."""\ntype User implements Node { id: ID!  name: String  age: Int! }',
  node: 'interface Node { id: ID! }',
  order: 'type Order { id: ID! }',
  union: 'union SearchResult = User | Order',
  role: 'enum Role { ADMIN MEMBER }',
  input: 'input UserInput { email: String!  limit: Int = 5 }',
  mutation: 'type Mutation { createUser(input: UserInput!): User }',
  directive: 'directive @cached(ttl: Int) on FIELD_DEFINITION',
};
type Part = keyof typeof BASE;

const sdlOf = (parts: Partial<Record<Part, string | null>>): string =>
  (Object.keys(BASE) as Part[])
    .map((part) => (part in parts ? parts[part] : BASE[part]))
    .filter((text): text is string => text !== null)
    .join('\n');

/** [change, the parts it rewrites, expected kind, class, coordinate]. */
const CHANGES: ReadonlyArray<readonly [string, Partial<Record<Part, string | null>>, string, SchemaChangeClass, string | null]> = [
  ['field removed', { user: 'type User implements Node { id: ID!  name: String }' }, 'FIELD_REMOVED', 'breaking', 'User.age'],
  ['field type changed', { user: 'type User implements Node { id: ID!  name: Int  age: Int! }' }, 'FIELD_CHANGED_KIND', 'breaking', 'User.name'],
  ['non-null field made nullable', { user: 'type User implements Node { id: ID!  name: String  age: Int }' }, 'FIELD_CHANGED_KIND', 'breaking', 'User.age'],
  ['nullable field made non-null', { user: 'type User implements Node { id: ID!  name: String!  age: Int! }' }, 'FIELD_CHANGED_KIND_SAFE', 'safe', 'User.name'],
  ['field added', { order: 'type Order { id: ID!  total: Float }' }, 'FIELD_ADDED', 'safe', 'Order.total'],
  ['required argument added', { mutation: 'type Mutation { createUser(input: UserInput!, dryRun: Boolean!): User }' }, 'REQUIRED_ARG_ADDED', 'breaking', 'Mutation.createUser(dryRun:)'],
  ['optional argument added', { mutation: 'type Mutation { createUser(input: UserInput!, dryRun: Boolean): User }' }, 'OPTIONAL_ARG_ADDED', 'dangerous', 'Mutation.createUser(dryRun:)'],
  ['argument removed', { query: 'type Query { user(first: Int = 10): User  search: [SearchResult!]!  order: Order  role: Role }' }, 'ARG_REMOVED', 'breaking', 'Query.user(id:)'],
  ['argument type changed', { query: 'type Query { user(id: Int, first: Int = 10): User  search: [SearchResult!]!  order: Order  role: Role }' }, 'ARG_CHANGED_KIND', 'breaking', 'Query.user(id:)'],
  ['argument default changed', { query: 'type Query { user(id: ID, first: Int = 20): User  search: [SearchResult!]!  order: Order  role: Role }' }, 'ARG_DEFAULT_VALUE_CHANGE', 'dangerous', 'Query.user(first:)'],
  ['argument default added', { query: 'type Query { user(id: ID = "1", first: Int = 10): User  search: [SearchResult!]!  order: Order  role: Role }' }, 'ARG_DEFAULT_VALUE_ADDED', 'safe', 'Query.user(id:)'],
  ['enum value added', { role: 'enum Role { ADMIN MEMBER GUEST }' }, 'VALUE_ADDED_TO_ENUM', 'dangerous', 'Role.GUEST'],
  ['enum value removed', { role: 'enum Role { MEMBER }' }, 'VALUE_REMOVED_FROM_ENUM', 'breaking', 'Role.ADMIN'],
  ['type added', { order: 'type Order { id: ID! }\ntype Invoice { id: ID! }' }, 'TYPE_ADDED', 'safe', 'Invoice'],
  ['type removed', { union: 'union SearchResult = User', order: null, query: 'type Query { user(id: ID, first: Int = 10): User  search: [SearchResult!]!  role: Role }' }, 'TYPE_REMOVED', 'breaking', 'Order'],
  ['type changed kind', { order: 'type Order { id: ID! }\ntype Shipment { id: ID! }', union: 'union SearchResult = User | Shipment', role: 'scalar Role' }, 'TYPE_CHANGED_KIND', 'breaking', 'Role'],
  ['interface removed from a type', { user: '"""A person."""\ntype User { id: ID!  name: String  age: Int! }' }, 'IMPLEMENTED_INTERFACE_REMOVED', 'breaking', 'User'],
  ['interface added to a type', { order: 'type Order implements Node { id: ID! }' }, 'IMPLEMENTED_INTERFACE_ADDED', 'dangerous', 'Order'],
  ['type added to a union', { union: 'union SearchResult = User | Order | Shipment', order: 'type Order { id: ID! }\ntype Shipment { id: ID! }' }, 'TYPE_ADDED_TO_UNION', 'dangerous', 'SearchResult'],
  ['type removed from a union', { union: 'union SearchResult = User' }, 'TYPE_REMOVED_FROM_UNION', 'breaking', 'SearchResult'],
  ['required input field added', { input: 'input UserInput { email: String!  limit: Int = 5  name: String! }' }, 'REQUIRED_INPUT_FIELD_ADDED', 'breaking', 'UserInput.name'],
  ['optional input field added', { input: 'input UserInput { email: String!  limit: Int = 5  nick: String }' }, 'OPTIONAL_INPUT_FIELD_ADDED', 'dangerous', 'UserInput.nick'],
  ['input field default changed', { input: 'input UserInput { email: String!  limit: Int = 50 }' }, 'INPUT_FIELD_DEFAULT_VALUE_CHANGE', 'dangerous', 'UserInput.limit'],
  ['description changed', { user: '"""Someone."""\ntype User implements Node { id: ID!  name: String  age: Int! }' }, 'DESCRIPTION_CHANGED', 'safe', 'User'],
  ['directive removed', { directive: null }, 'DIRECTIVE_REMOVED', 'breaking', '@cached'],
  ['directive added', { directive: 'directive @cached(ttl: Int) on FIELD_DEFINITION\ndirective @audit on FIELD_DEFINITION' }, 'DIRECTIVE_ADDED', 'safe', '@audit'],
  ['directive argument removed', { directive: 'directive @cached on FIELD_DEFINITION' }, 'DIRECTIVE_ARG_REMOVED', 'breaking', '@cached(ttl:)'],
  ['directive location removed', { directive: 'directive @cached(ttl: Int) on OBJECT' }, 'DIRECTIVE_LOCATION_REMOVED', 'breaking', '@cached'],
];

describe('schema change report', () => {
  it('should find no change between a schema and itself', () => {
    expect(compareSchemas(buildSchema(sdlOf({})), buildSchema(sdlOf({})))).toEqual({ changes: [], counts: { breaking: 0, dangerous: 0, safe: 0 } });
  });

  it.each(CHANGES)('should classify "%s" as %s, %s at its coordinate', (_change, parts, kind, changeClass, coordinate) => {
    const report = compareSchemas(buildSchema(sdlOf({})), buildSchema(sdlOf(parts)));
    expect(report.changes).toContainEqual(expect.objectContaining({ kind, class: changeClass, coordinate }));
    expect(report.counts[changeClass]).toBeGreaterThan(0);
  });

  it('should list breaking changes first and count every class', () => {
    const report = compareSchemas(buildSchema(sdlOf({})), buildSchema(sdlOf({ role: 'enum Role { MEMBER GUEST }', order: 'type Order { id: ID!  total: Int }' })));
    expect(report.changes.map((change) => change.class)).toEqual(['breaking', 'dangerous', 'safe']);
    expect(report.counts).toEqual({ breaking: 1, dangerous: 1, safe: 1 });
    expect(report.changes[0]).toEqual({ class: 'breaking', kind: 'VALUE_REMOVED_FROM_ENUM', coordinate: 'Role.ADMIN', message: 'Enum value Role.ADMIN was removed.' });
  });
});
