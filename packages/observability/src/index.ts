export * from './logger.js';
export * from './metrics.js';
export * from './spans.js';
export * from './request-metrics.js';
