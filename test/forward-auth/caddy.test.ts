import { forwardAuthJourney } from './proxy-journey.js';
import { startCaddy } from './proxies.js';

// Caddy v2.11.9 with docs/forward-auth/Caddyfile (test/infra/proxies.sh builds it).
forwardAuthJourney('Caddy', startCaddy);
