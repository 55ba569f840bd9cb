import { describe, expect, it } from '@jest/globals';
import { jsonDepth, jsonShape } from '../src/json-depth.js';

const depthOf = (text: string, limit?: number): number => jsonDepth(Buffer.from(text, 'utf8'), limit);

describe('jsonDepth', () => {
  it.each([
    ['1', 0],
    ['"text"', 0],
    ['{}', 1],
    ['[1, [2, [3]], {"a": {"b": []}}]', 4],
    ['{"a": "[[[[{{{{"}', 1],
    ['{"a": "quote \\" then [[["}', 1],
    ['{"a": "backslash \\\\", "b": [[1]]}', 3],
    ['{"é": ["ü", {"🍞": []}]}', 4],
  ])('should read the nesting of %s as %i, skipping strings', (text, depth) => {
    expect(depthOf(text)).toBe(depth);
    expect(JSON.parse(text)).toBeDefined();
  });

  it('should stop counting at the limit', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expect(depthOf(deep, 64)).toBe(64);
    expect(depthOf(deep)).toBe(100_000);
  });

  it('should count separators outside strings, up to the limit', () => {
    expect(jsonShape(Buffer.from('{"a": "x,y:z", "b": [1, 2, 3]}'))).toEqual({ depth: 2, separators: 5 });
    const wide = Buffer.from(`[${Array.from({ length: 100_000 }, () => '1').join(',')}]`);
    expect(jsonShape(wide, { separators: 1000 })).toEqual({ depth: 1, separators: 1000 });
  });
});
