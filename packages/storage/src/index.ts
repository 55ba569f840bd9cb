export * from './redis.js';
export * from './redis-store-base.js';
export * from './redis-lease.js';
