export * from './oidc-errors.js';
export * from './oidc-token-client.js';
export * from './token-retry.js';
export * from './secret-matcher.js';
export * from './api-key.js';
