/**
 * The federation benches' subgraph i: an entity of its own (`Thing{i}` with root fields), referring
 * to a `Product` entity that every subgraph shares and adds a field to (`shared`: composition
 * merges across all of them), or to a `Product{i}` of its own (nothing shared). `revision` changes
 * a description: a new schema each publish, the same shape.
 */
export function subgraphSdl(i: number, options: { shared?: boolean; revision?: number } = {}): string {
  const { shared = true, revision = 0 } = options;
  const product = shared ? 'Product' : `Product${i}`;
  return `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key", "@shareable"])

type ${product} @key(fields: "id") {
  id: ID!
  "Field of subgraph ${i}, revision ${revision}."
  field${i}: Int
  name: String @shareable
}

type Thing${i} @key(fields: "id") {
  id: ID!
  label: String
  amount: Float
  tags: [String!]!
  product: ${product}
}

input ThingFilter${i} {
  label: String
  minAmount: Float
}

type Query {
  thing${i}(id: ID!): Thing${i}
  things${i}(filter: ThingFilter${i}, first: Int = 20): [Thing${i}!]!
}
`;
}
