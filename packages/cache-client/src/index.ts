export * from './cache-client.js';
export * from './serializers.js';
export * from './proto.js';
