import { describe, expect, it, jest } from '@jest/globals';
import { AppError } from '@sp/core';
import { byMethod } from '../src/by-method.js';

interface Ctx {
  method: string;
  body?: unknown;
}
const next = () => Promise.resolve();
const handler = (body: string) => (ctx: Ctx) => {
  ctx.body = body;
};

/** The error a request with this method is refused with (undefined: it was handled). */
function refusal(middleware: (ctx: Ctx, next: () => Promise<void>) => unknown, method: string): AppError | undefined {
  try {
    middleware({ method }, next);
    return undefined;
  } catch (err) {
    return err as AppError;
  }
}

describe('byMethod', () => {
  it('should run the handler of the request method and answer HEAD with the GET handler', () => {
    const middleware = byMethod<Ctx>({ GET: handler('get'), POST: handler('post') });
    const get: Ctx = { method: 'GET' };
    const head: Ctx = { method: 'HEAD' };
    const post: Ctx = { method: 'POST' };
    middleware(get, next);
    middleware(head, next);
    middleware(post, next);
    expect([get.body, head.body, post.body]).toEqual(['get', 'get', 'post']);
  });

  it('should pass next on to the handler and return what it returns', async () => {
    const downstream = jest.fn(() => Promise.resolve());
    const middleware = byMethod<Ctx>({ POST: (_ctx, n) => n() });
    await middleware({ method: 'POST' }, downstream);
    expect(downstream).toHaveBeenCalledTimes(1);
  });

  it('should refuse any other method with 405 and an Allow header in the usual order', () => {
    const error = refusal(byMethod<Ctx>({ DELETE: handler('delete'), POST: handler('post'), GET: handler('get') }), 'PUT');
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ status: 405, code: 'method_not_allowed', message: 'method not allowed', headers: { Allow: 'GET, HEAD, POST, DELETE' } });
  });

  it('should not answer HEAD on a path without GET', () => {
    expect(refusal(byMethod<Ctx>({ POST: handler('post') }), 'HEAD')).toMatchObject({ status: 405, headers: { Allow: 'POST' } });
  });
});
