export { GrpcServer } from './grpc-server.js';
export { GrpcStreamCall, type CallContext, type GrpcMethodDefinition, type ServerStreamingHandler, type UnaryCall, type UnaryCallback, type UnaryHandler } from './handlers.js';
export { DEFAULT_LIMITS, limitProblems, type GrpcServerLimits, type GrpcServerLogger, type GrpcServerOptions, type LimitName } from './options.js';
export { encodeGrpcMessage, MAX_STATUS_MESSAGE_BYTES, type GrpcError } from './grpc-status.js';
export { CONNECTION_RESERVE_BYTES } from './budgets.js';
