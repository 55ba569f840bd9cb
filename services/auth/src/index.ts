export * from './app.js';
export * from './adapters.js';
export * from './config.js';
export * from './services.js';
export * from './server.js';
export * from './tls.js';
export { COOKIE_NAME } from './session-cookie.js';
export { JSON_BODY_LIMIT_BYTES } from './json-body.js';
export { MAX_REDIRECT_URI_LENGTH } from './redirect-allowlist.js';
