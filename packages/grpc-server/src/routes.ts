import type { GrpcMethodDefinition } from './handlers.js';

export type CallKind = 'unary' | 'serverStreaming' | 'bidi';

/** A served method: its definition, handler and the names its span carries. */
export interface Route {
  method: GrpcMethodDefinition;
  kind: CallKind;
  handler: (call: never, callback: never) => void;
  /** `grpc.package.Service/Method`, the name @opentelemetry/instrumentation-grpc gives its spans. */
  spanName: string;
  service: string;
  rpc: string;
}

export function routeOf(method: GrpcMethodDefinition, handler: unknown): Route {
  if (typeof handler !== 'function') throw new Error(`no handler for ${method.path}`);
  if (method.requestStream && !method.responseStream) throw new Error(`${method.path}: client-streaming methods are not supported`);
  const [, service = '', rpc = ''] = /^\/([^/]+)\/([^/]+)$/.exec(method.path) ?? [];
  return {
    method,
    kind: method.requestStream ? 'bidi' : method.responseStream ? 'serverStreaming' : 'unary',
    handler: handler as Route['handler'],
    spanName: `grpc.${service}/${rpc}`,
    service,
    rpc,
  };
}
