// The objects `make up` puts on the local kube-apiserver (scripts/platform.sh): the namespace the
// graph controller watches, the example annotated Service (k8s/examples/annotated-service.yaml)
// and the Services announcing the three subgraph fixtures. Server-side apply, so a second `make
// up` leaves them as they are. Through the Kubernetes client the controller itself uses, not
// kubectl: `make up` builds only the commands it runs (kube-apiserver, etcd), and kubectl is a
// build of its own that only the tests and the single-node cluster need (test/infra/kube.sh).
//
//   npx tsx scripts/local-kube.ts
import { readFileSync } from 'node:fs';
import { loadAllYaml, type KubernetesObject } from '@kubernetes/client-node';
import { adminKubeConfig, applyObjects, ensureNamespace } from '../test/support/kube-apiserver.js';
import { localFederation, localKube, subgraphService } from './local-platform.js';

const example = loadAllYaml(readFileSync(new URL('../k8s/examples/annotated-service.yaml', import.meta.url), 'utf8')) as KubernetesObject[];
const subgraphs = Object.entries(localFederation.subgraphs).map(([name, port]) => subgraphService(name, port) as KubernetesObject);

const kubeConfig = adminKubeConfig();
await ensureNamespace(kubeConfig, localKube.namespace);
await applyObjects(kubeConfig, [...example, ...subgraphs], localKube.namespace, 'make-up');
