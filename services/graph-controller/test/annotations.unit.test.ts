import { describe, expect, it } from '@jest/globals';
import { hasGraphAnnotation, parseGraphAnnotations } from '../src/reconcile/annotations.js';
import { graph, service } from './support/services.js';

const orders = (annotations: Record<string, string> | undefined, extra: Partial<Parameters<typeof service>[0]> = {}) =>
  service({ name: 'orders', namespace: 'shop', annotations, ports: [{ name: 'http', port: 8080 }, { name: 'admin', port: 9090 }], ...extra });

const invalid = (annotations: Record<string, string>, extra: Partial<Parameters<typeof service>[0]> = {}) => {
  const parsed = parseGraphAnnotations(orders(annotations, extra));
  if (parsed.kind !== 'invalid') throw new Error(`expected invalid, got ${JSON.stringify(parsed)}`);
  return parsed.problems;
};

describe('parseGraphAnnotations', () => {
  it('should ignore a Service without the name annotation, even with the other annotations', () => {
    expect(parseGraphAnnotations(orders(undefined))).toEqual({ kind: 'none' });
    expect(parseGraphAnnotations(orders({ 'graph-registry.io/port': 'admin', 'graph-registry.io/path': '/q', 'graph-registry.io/scheme': 'https' }))).toEqual({ kind: 'none' });
    expect(hasGraphAnnotation(orders({ 'graph-registry.io/port': 'admin' }))).toBe(false);
  });

  it('should treat an empty or blank name annotation as not opted in', () => {
    expect(parseGraphAnnotations(orders(graph('')))).toEqual({ kind: 'none' });
    expect(parseGraphAnnotations(orders(graph('   ')))).toEqual({ kind: 'none' });
    expect(hasGraphAnnotation(orders(graph(' ')))).toBe(false);
  });

  it('should default to http, the first port and /graphql', () => {
    expect(parseGraphAnnotations(orders(graph('orders')))).toEqual({ kind: 'graph', name: 'orders', url: 'http://orders.shop.svc.cluster.local:8080/graphql' });
  });

  // Every combination of the optional annotations, each present or left to its default.
  const combinations: Array<[string, Record<string, string>, string]> = [
    ['none', {}, 'http://orders.shop.svc.cluster.local:8080/graphql'],
    ['port', { 'graph-registry.io/port': 'admin' }, 'http://orders.shop.svc.cluster.local:9090/graphql'],
    ['path', { 'graph-registry.io/path': '/api/graphql' }, 'http://orders.shop.svc.cluster.local:8080/api/graphql'],
    ['scheme', { 'graph-registry.io/scheme': 'https' }, 'https://orders.shop.svc.cluster.local:8080/graphql'],
    ['port+path', { 'graph-registry.io/port': '9090', 'graph-registry.io/path': '/q' }, 'http://orders.shop.svc.cluster.local:9090/q'],
    ['port+scheme', { 'graph-registry.io/port': 'admin', 'graph-registry.io/scheme': 'https' }, 'https://orders.shop.svc.cluster.local:9090/graphql'],
    ['path+scheme', { 'graph-registry.io/path': '/v2/graphql', 'graph-registry.io/scheme': 'https' }, 'https://orders.shop.svc.cluster.local:8080/v2/graphql'],
    ['port+path+scheme', { 'graph-registry.io/port': '9090', 'graph-registry.io/path': '/gql', 'graph-registry.io/scheme': 'http' }, 'http://orders.shop.svc.cluster.local:9090/gql'],
  ];
  it.each(combinations)('should build the URL with %s set', (_set, annotations, url) => {
    expect(parseGraphAnnotations(orders(graph('orders', annotations)))).toEqual({ kind: 'graph', name: 'orders', url });
  });

  it('should resolve a named port and a numbered port to the Service port', () => {
    expect(parseGraphAnnotations(orders(graph('orders', { 'graph-registry.io/port': 'admin' })))).toMatchObject({ url: expect.stringContaining(':9090/') });
    expect(parseGraphAnnotations(orders(graph('orders', { 'graph-registry.io/port': '8080' })))).toMatchObject({ url: expect.stringContaining(':8080/') });
  });

  it('should trim values, accept an upper-case scheme and use the cluster domain given', () => {
    const parsed = parseGraphAnnotations(orders(graph(' orders\n', { 'graph-registry.io/port': ' admin ', 'graph-registry.io/scheme': 'HTTPS', 'graph-registry.io/path': ' /q\n' })), 'corp.example');
    expect(parsed).toEqual({ kind: 'graph', name: 'orders', url: 'https://orders.shop.svc.corp.example:9090/q' });
  });

  it('should accept percent-encoded and sub-delimiter characters in the path', () => {
    expect(parseGraphAnnotations(orders(graph('orders', { 'graph-registry.io/path': "/a%20b/c;v=1/d:e@f/!$&'()*+,=-._~" })))).toMatchObject({ kind: 'graph' });
  });

  it('should reject an unknown port name', () => {
    expect(invalid(graph('orders', { 'graph-registry.io/port': 'grpc' }))).toEqual(['graph-registry.io/port "grpc" names no port of the Service']);
  });

  it('should reject a port number the Service does not expose, and out-of-range numbers', () => {
    expect(invalid(graph('orders', { 'graph-registry.io/port': '7000' }))).toEqual(['graph-registry.io/port "7000" is not a port of the Service']);
    expect(invalid(graph('orders', { 'graph-registry.io/port': '0' }))[0]).toMatch(/from 1 to 65535/);
    expect(invalid(graph('orders', { 'graph-registry.io/port': '65536' }))[0]).toMatch(/from 1 to 65535/);
    expect(invalid(graph('orders', { 'graph-registry.io/port': '-1' }))[0]).toMatch(/names no port/);
  });

  it('should accept any port number on headless and ExternalName Services', () => {
    expect(parseGraphAnnotations(orders(graph('orders', { 'graph-registry.io/port': '7000' }), { clusterIP: 'None' }))).toMatchObject({ url: expect.stringContaining(':7000/') });
    expect(parseGraphAnnotations(orders(graph('orders', { 'graph-registry.io/port': '443' }), { type: 'ExternalName', ports: [] }))).toMatchObject({ url: expect.stringContaining(':443/') });
  });

  it('should require a port annotation on a Service without ports', () => {
    expect(invalid(graph('orders'), { type: 'ExternalName', ports: [] })).toEqual(['the Service has no ports: set graph-registry.io/port to a port number']);
  });

  it.each([
    ['graphql', 'must start with "/"'],
    ['/graphql?x=1', 'must be a URL path'],
    ['/graphql#top', 'must be a URL path'],
    ['/graph ql', 'must be a URL path'],
    ['/graph\tql', 'must be a URL path'],
    ['/ä', 'must be a URL path'],
    ['/%zz', 'must be a URL path'],
    [`/${'a'.repeat(2048)}`, 'longer than 2048'],
  ])('should reject the path %j', (path, message) => {
    expect(invalid(graph('orders', { 'graph-registry.io/path': path }))[0]).toContain(message);
  });

  it('should reject a scheme other than http and https', () => {
    expect(invalid(graph('orders', { 'graph-registry.io/scheme': 'grpc' }))).toEqual(['graph-registry.io/scheme "grpc" must be http or https']);
  });

  it.each(['Orders', '-orders', '.orders', 'or/ders', 'or ders', 'a'.repeat(64), 'ördere'])('should reject the name %j', (name) => {
    expect(invalid(graph(name))[0]).toContain('must match ^[a-z0-9]([a-z0-9._-]{0,62})$');
  });

  it('should accept names at the limits of the registry pattern', () => {
    for (const name of ['a', '0', 'a'.repeat(63), 'orders.v2_beta-1']) expect(parseGraphAnnotations(orders(graph(name)))).toMatchObject({ kind: 'graph', name });
  });

  it('should reject the names the registry reserves', () => {
    expect(invalid(graph('schema'))).toEqual(['graph-registry.io/name "schema" is reserved by the graph registry']);
    expect(invalid(graph('health'))[0]).toContain('reserved');
  });

  it('should report every problem at once', () => {
    const problems = invalid(graph('Bad', { 'graph-registry.io/port': 'nope', 'graph-registry.io/path': 'x', 'graph-registry.io/scheme': 'ftp' }));
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(/name[\s\S]*port[\s\S]*path[\s\S]*scheme/);
  });
});
