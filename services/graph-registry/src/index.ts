export * from './app.js';
export * from './graph-registry.js';
export * from './config.js';
export * from './graph-store.js';
export * from './memory-graph-store.js';
export * from './redis-graph-store.js';
export { isGraphName } from './names.js';
export { URL_BODY_LIMIT_BYTES } from './graph-handlers.js';
export { SCHEMA_BODY_LIMIT_BYTES } from './schema-handlers.js';
