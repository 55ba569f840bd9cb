import { forwardAuthJourney } from './proxy-journey.js';
import { startNginx } from './proxies.js';

// Debian's nginx with docs/forward-auth/nginx.conf (test/infra/proxies.sh installs it).
forwardAuthJourney('nginx', startNginx);
