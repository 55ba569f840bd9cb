/** Schemas of about `bytes` bytes (never more) built to be expensive to check, as issue 25 sent them. */

function fill(head: string, line: (i: number) => string, bytes: number, tail: string): string {
  const parts = [head];
  let size = head.length + tail.length;
  for (let i = 0; ; i += 1) {
    const next = line(i);
    if (size + next.length > bytes) break;
    parts.push(next);
    size += next.length;
  }
  parts.push(tail);
  return parts.join('');
}

/**
 * Type definitions, then references to a type that does not exist: graphql-js compares each
 * unknown name with every defined one, and locates each error by scanning the text before it.
 */
export function unknownTypeReferences(bytes: number, definedTypes = 2000): string {
  const definitions = Array.from({ length: definedTypes }, (_, i) => `type T${i} { f: Int }\n`).join('');
  return fill(`type Query { a: Int }\n${definitions}type Z {\n`, (i) => ` f${i}: Missing\n`, bytes, '}\n');
}

/** One problem per field for validateSchema: an input type where an output type belongs. */
export function inputTypesAsOutputs(bytes: number): string {
  return fill('input I { a: Int }\ntype Query {\n', (i) => ` f${i}: I\n`, bytes, '}\n');
}

/** Valid, and large: `bytes` of ordinary types with arguments, interfaces and descriptions. */
export function largeValidSchema(bytes: number): string {
  return fill(
    'interface Node { id: ID! }\ntype Query { node(id: ID!): Node }\n',
    (i) => `"""Type ${i}"""\ntype T${i} implements Node { id: ID! name(first: Int = 10, after: String): String list: [T${i}!]! }\n`,
    bytes,
    '',
  );
}
