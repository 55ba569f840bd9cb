export * from './cache-client.js';
export * from './serializers.js';
export * from './proto.js';
export type { NearCacheSettings, NearCacheView } from './near-cache.js';
