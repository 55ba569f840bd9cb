import { describe, expect, it } from '@jest/globals';
import { buildSchema } from 'graphql';
import { findSdlProblems } from '../src/schemas/schema-sdl.js';
import { UNUSABLE_SCHEMAS } from './support/unusable-schemas.js';

describe('schema SDL check', () => {
  it.each([
    ['a minimal schema', 'type Query { a: Int }'],
    ['an explicit schema definition', 'schema { query: Root }\ntype Root { a: Int }'],
    ['interfaces, unions, enums and inputs', 'interface Node { id: ID! }\ntype A implements Node { id: ID! }\nunion U = A\nenum E { X Y }\ninput I { e: E }\ntype Query { u(i: I): U }'],
  ])('should accept %s, as buildSchema does', (_case, sdl) => {
    expect(findSdlProblems(sdl)).toEqual([]);
    expect(() => buildSchema(sdl)).not.toThrow();
  });

  it.each([
    ['a syntax error', 'type Query {'],
    ['an unknown type', 'type Query { a: Missing }'],
    ['a duplicate type', 'type Query { a: Int }\ntype Query { b: Int }'],
    ['an unknown directive', 'type Query { a: Int @nope }'],
    ['an extension of an unknown type', 'extend type Missing { a: Int }'],
  ])('should refuse %s, as buildSchema does, with a location', (_case, sdl) => {
    const problems = findSdlProblems(sdl);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]!.locations.length).toBeGreaterThan(0);
    expect(() => buildSchema(sdl)).toThrow(problems[0]!.message);
  });

  it.each(UNUSABLE_SCHEMAS)('should refuse a schema clients cannot use: %s, as validateSchema does', (_case, sdl, first) => {
    expect(findSdlProblems(sdl)[0]).toEqual(first);
    expect(() => buildSchema(sdl)).not.toThrow();
  });

  it('should refuse operations and fragments, which buildSchema silently ignores', () => {
    expect(findSdlProblems('type Query { a: Int }\nfragment F on Query { a }')).toEqual([
      { message: 'A schema document may only contain type system definitions; found an executable definition.', locations: [{ line: 2, column: 1 }] },
    ]);
  });

  it('should report absurd nesting as a problem instead of throwing', () => {
    const depth = 100_000;
    expect(findSdlProblems(`type Query { a: ${'['.repeat(depth)}Int${']'.repeat(depth)} }`)).toEqual([{ message: 'Schema is nested too deeply.', locations: [] }]);
  });
});
