import { loadConfigOrExit } from '@sp/core';
import { bootService, serveService } from '@sp/http';
import { COMPONENT, loadConfig } from './config.js';
import { createGraphController } from './graph-controller.js';

// Load the configuration, create the service, serve it: docs/development.md, "One shape for every service".
const { config, logger, registry } = bootService(COMPONENT, loadConfig);
// Creating the controller loads the kubeconfig: one that cannot be loaded is refused like a bad variable.
const controller = loadConfigOrExit(() => createGraphController(config, { logger, registry, now: Date.now }), COMPONENT);
const { managementPort } = await serveService({
  api: controller.api,
  config,
  registry,
  readiness: controller.readiness,
  logger,
  // The drain sets no deadline of its own (reconciles in progress end within the registry's
  // timeout), so the grace period keeps nothing back for closing the watches.
  closeReserveMs: 0,
  close: () => controller.close(),
});
logger.info(
  {
    managementPort,
    registry: config.registry.url,
    namespaces: config.namespaces.length > 0 ? config.namespaces : 'all',
    lease: `${config.leaderElection.leaseNamespace}/${config.leaderElection.leaseName}`,
    identity: config.leaderElection.identity,
    kube: config.kubeSource,
  },
  'graph controller started',
);
