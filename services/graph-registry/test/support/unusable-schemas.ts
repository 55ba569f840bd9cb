/**
 * Schemas that pass the SDL rules of buildSchema but that graphql-js' validateSchema rejects,
 * as issue 25 found them stored: [case, SDL, the first problem reported].
 */
export const UNUSABLE_SCHEMAS: ReadonlyArray<readonly [string, string, { message: string; locations: Array<{ line: number; column: number }> }]> = [
  ['no Query type', 'type Order { id: ID! }', { message: 'Query root type must be provided.', locations: [] }],
  ['an object type without fields', 'type Query { a: Empty }\ntype Empty', { message: 'Type Empty must define one or more fields.', locations: [{ line: 2, column: 1 }] }],
  [
    'an interface not implemented',
    'interface Node { id: ID! }\ntype Query implements Node { a: Int }',
    { message: 'Interface field Node.id expected but Query does not provide it.', locations: [{ line: 1, column: 18 }, { line: 2, column: 1 }] },
  ],
  ['an input type as a field type', 'input I { a: Int }\ntype Query { a: I }', { message: 'The type of Query.a must be Output Type but got: I.', locations: [{ line: 2, column: 17 }] }],
  ['an object type as an argument type', 'type O { a: Int }\ntype Query { a(o: O): Int }', { message: 'The type of Query.a(o:) must be Input Type but got: O.', locations: [{ line: 2, column: 19 }] }],
  ['a union of scalars', 'union U = String | Int\ntype Query { u: U }', { message: 'Union type U can only include Object types, it cannot include String.', locations: [{ line: 1, column: 11 }] }],
  ['an enum without values', 'enum E\ntype Query { e: E }', { message: 'Enum type E must define one or more values.', locations: [{ line: 1, column: 1 }] }],
  [
    'a non-null input cycle',
    'input A { b: B! }\ninput B { a: A! }\ntype Query { f(a: A): Int }',
    { message: 'Input Object A cannot be provided a finite value because it references itself through fields: A.b, B.a.', locations: [{ line: 1, column: 11 }, { line: 2, column: 11 }] },
  ],
  ['a name beginning with __', 'type __Bad { a: Int }\ntype Query { b: __Bad }', { message: 'Name "__Bad" must not begin with "__", which is reserved by GraphQL introspection.', locations: [{ line: 1, column: 1 }] }],
  ['a scalar as root type', 'schema { query: String }', { message: 'Query root type must be Object type, it cannot be String.', locations: [{ line: 1, column: 17 }] }],
];
