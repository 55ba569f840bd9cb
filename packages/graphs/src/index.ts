export * from './graph-name.js';
export * from './schema-versions.js';
export * from './schema-events.js';
