import { bootService, onShutdown, startManagementServer } from '@sp/platform';
import { COMPONENT, createGraphController } from './graph-controller.js';
import { loadConfig } from './config.js';
import { loadKubeConfig } from './kube-client.js';

const { config, logger, registry } = bootService(COMPONENT, loadConfig);

let kubeConfig;
try {
  kubeConfig = loadKubeConfig(config.kubeSource);
} catch (err) {
  process.stderr.write(`${COMPONENT}: invalid configuration: KUBECONFIG: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}

const controller = createGraphController(config, { kubeConfig, logger, metrics: registry });
const management = await startManagementServer({ port: config.managementPort, registry, readiness: controller.readiness, logger });
controller.start();
logger.info(
  {
    managementPort: management.port,
    registry: config.registry.url,
    namespaces: config.namespaces.length > 0 ? config.namespaces : 'all',
    lease: `${config.leaderElection.leaseNamespace}/${config.leaderElection.leaseName}`,
    identity: config.leaderElection.identity,
    kube: config.kubeSource,
  },
  'graph controller started',
);

onShutdown(
  [
    { name: 'readiness', run: () => Promise.resolve(management.markShuttingDown()) },
    { name: 'controller', run: () => controller.stop({ releaseLease: true }) },
    { name: 'management', run: () => management.close() },
  ],
  { logger, gracePeriodMs: config.shutdownGraceMs },
);
