import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { AppError } from '@sp/core';
import { parseGraphUrl } from '../src/graphs/graph-url.js';
import { isGraphName, validateName } from '../src/graphs/names.js';

describe('graph URL', () => {
  it.each([
    ['http://orders:4000/graphql', 'http://orders:4000/graphql'],
    ['https://[::1]:8443/graphql', 'https://[::1]:8443/graphql'],
    ['http://10.0.0.1/', 'http://10.0.0.1/'],
    ['\thttp://a.example.com/graphql\n', 'http://a.example.com/graphql'],
  ])('should accept %j', (text, url) => {
    expect(parseGraphUrl(text)).toBe(url);
  });

  it('should accept every URL fast-check calls a web URL with an http(s) scheme', () => {
    fc.assert(
      fc.property(fc.webUrl({ validSchemes: ['http', 'https'], withQueryParameters: true, withFragments: true }), (url) => {
        expect(parseGraphUrl(url)).toBe(url);
      }),
    );
  });

  it('should refuse any text that does not start with http:// or https://', () => {
    fc.assert(
      fc.property(
        fc.string().filter((text) => !/^\s*https?:\/\//i.test(text)),
        (text) => {
          expect(() => parseGraphUrl(text)).toThrow(AppError);
        },
      ),
    );
  });
});

describe('graph names', () => {
  it('should agree with the documented pattern and reserved names for any string', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,65}$/), fc.constantFrom('schema', 'health')), (name) => {
        const expected = /^[a-z0-9]([a-z0-9._-]{0,62})$/.test(name) && name !== 'schema' && name !== 'health';
        expect(isGraphName(name)).toBe(expected);
        if (expected) expect(validateName(name)).toBe(name);
        else expect(() => validateName(name)).toThrow(AppError);
      }),
    );
  });
});
