export * from './config.js';
export * from './errors.js';
export * from './deadline.js';
export * from './backoff.js';
export * from './poll.js';
export * from './final-hooks.js';
export * from './shutdown.js';
export * from './redis-url.js';
