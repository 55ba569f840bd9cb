import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** Where the plain manifests live. */
export const MANIFEST_DIR = join(import.meta.dirname, '../../../../k8s');

export interface K8sDoc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** Every object of the YAML files in a folder of k8s/. */
export function manifests(folder: string): K8sDoc[] {
  const dir = join(MANIFEST_DIR, folder);
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .flatMap((file) => parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((doc) => doc.toJS() as K8sDoc));
}

/** The verb a request needs, as the API server's authorizer derives it. */
export function verbOf(method: string, isCollection: boolean, watch: boolean): string {
  if (method === 'GET') return watch ? 'watch' : isCollection ? 'list' : 'get';
  return { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' }[method] ?? method.toLowerCase();
}

/** True when one of the rules allows the verb on the resource (and name). */
export function allows(rules: readonly PolicyRule[], request: { group: string; resource: string; verb: string; name?: string }): boolean {
  return rules.some(
    (rule) =>
      rule.apiGroups.includes(request.group) &&
      rule.resources.includes(request.resource) &&
      rule.verbs.includes(request.verb) &&
      (rule.resourceNames === undefined || (request.name !== undefined && rule.resourceNames.includes(request.name))),
  );
}
