export * from './http/app.js';
export * from './graph-registry.js';
export * from './config.js';
export * from './graphs/graph-store.js';
export * from './graphs/memory-graph-store.js';
export * from './graphs/redis-graph-store.js';
export { isGraphName } from './graphs/names.js';
export { URL_BODY_LIMIT_BYTES } from './graphs/graph-handlers.js';
export { SCHEMA_BODY_LIMIT_BYTES } from './schemas/schema-handlers.js';
