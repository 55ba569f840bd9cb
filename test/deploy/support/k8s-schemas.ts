import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { infra } from '../../support/infra.js';
import type { K8sObject } from './helm.js';

/**
 * Validation of rendered objects against the Kubernetes OpenAPI schemas, offline: the strict
 * JSON schemas (additionalProperties false) of kubernetes-validate, unpacked by
 * test/infra/deploy-tools.sh, and the prometheus-operator CRDs' openAPIV3Schema for
 * ServiceMonitor and PrometheusRule. What kubeconform -strict checks, without a download.
 */

/** The Kubernetes minors the chart is checked against: its kubeVersion floor and the newest carried. */
export const kubernetesVersions = ['1.29.0', '1.37.0'] as const;

function schemaDir(): string {
  let dir: string;
  try {
    dir = infra('K8S_SCHEMA_DIR');
  } catch {
    dir = join(import.meta.dirname, '../../../.cache/k8s-schemas');
  }
  if (!existsSync(dir)) throw new Error(`no Kubernetes schemas in ${dir}: run bash test/infra/deploy-tools.sh install`);
  return dir;
}

function crdDir(): string {
  try {
    return infra('PROMETHEUS_OPERATOR_CRD_DIR');
  } catch {
    throw new Error('PROMETHEUS_OPERATOR_CRD_DIR is not set: run bash test/infra/deploy-tools.sh install');
  }
}

export type Validate = (object: K8sObject) => string[];

function messages(validate: ValidateFunction, object: K8sObject): string[] {
  const valid: boolean = validate(object);
  if (valid) return [];
  return (validate.errors ?? []).map((e) => `${object.kind}/${object.metadata?.name}${e.instancePath} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** A validator of built-in kinds for one Kubernetes version (schemas compiled on first use of each kind). */
export function kubernetesValidator(version: string): Validate {
  const dir = join(schemaDir(), `v${version}`);
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(JSON.parse(readFileSync(join(dir, '_definitions.json'), 'utf8')) as object);
  const compiled = new Map<string, ValidateFunction>();
  return (object) => {
    const [group, groupVersion] = object.apiVersion.includes('/') ? object.apiVersion.split('/') : ['', object.apiVersion];
    const file = [object.kind.toLowerCase(), group!.split('.')[0], groupVersion].filter((part) => part !== '').join('-') + '.json';
    let validate = compiled.get(file);
    if (!validate) {
      const path = join(dir, file);
      if (!existsSync(path)) return [`${object.kind}/${object.metadata?.name}: no schema ${file} for ${object.apiVersion} in Kubernetes ${version}`];
      validate = ajv.compile(JSON.parse(readFileSync(path, 'utf8')) as object);
      compiled.set(file, validate);
    }
    return messages(validate, object);
  };
}

type Schema = Record<string, unknown>;

/**
 * The API server prunes fields a CRD schema does not name; a test should refuse them instead
 * (a misspelt field would silently vanish): every object schema with properties gets
 * additionalProperties false unless it preserves unknown fields.
 */
function strict(schema: Schema): Schema {
  const out: Schema = { ...schema };
  if (out.properties && out.additionalProperties === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true) out.additionalProperties = false;
  for (const key of ['properties', 'patternProperties'].filter((k) => out[k])) {
    out[key] = Object.fromEntries(Object.entries(out[key] as Record<string, Schema>).map(([k, v]) => [k, strict(v)]));
  }
  for (const key of ['items', 'additionalProperties', 'not'].filter((k) => out[k] && typeof out[k] === 'object')) out[key] = strict(out[key] as Schema);
  for (const key of ['allOf', 'anyOf', 'oneOf'].filter((k) => Array.isArray(out[k]))) out[key] = (out[key] as Schema[]).map(strict);
  return out;
}

/** CRD patterns are Go regular expressions: their `(?i)` is JavaScript's `i` flag. */
function goRegExp(pattern: string, flags: string): RegExp {
  const insensitive = pattern.includes('(?i)');
  return new RegExp(pattern.replaceAll('(?i)', ''), insensitive ? `${flags}i` : flags);
}
goRegExp.code = 'goRegExp';

/** Validators of the prometheus-operator kinds, by kind, from the CRDs' served v1 schemas. */
export function prometheusOperatorValidators(): Record<'ServiceMonitor' | 'PrometheusRule', Validate> {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, code: { regExp: goRegExp } });
  const load = (file: string): Validate => {
    const crd = parse(readFileSync(join(crdDir(), file), 'utf8')) as {
      spec: { group: string; versions: { name: string; schema: { openAPIV3Schema: Schema } }[] };
    };
    const version = crd.spec.versions.find((v) => v.name === 'v1')!;
    const schema = strict(version.schema.openAPIV3Schema);
    (schema.properties as Record<string, Schema>).metadata = { type: 'object' };
    const validate = ajv.compile(schema);
    return (object) => {
      const problems = messages(validate, object);
      if (object.apiVersion !== `${crd.spec.group}/v1`) problems.push(`${object.kind}/${object.metadata?.name}: apiVersion ${object.apiVersion}, expected ${crd.spec.group}/v1`);
      return problems;
    };
  };
  return {
    ServiceMonitor: load('monitoring.coreos.com_servicemonitors.yaml'),
    PrometheusRule: load('monitoring.coreos.com_prometheusrules.yaml'),
  };
}

/** Every problem of a set of objects against every checked Kubernetes version and the CRDs. */
export function schemaProblems(objects: readonly K8sObject[], validators: { kubernetes: Validate[]; crds: Record<string, Validate> }): string[] {
  const problems: string[] = [];
  for (const object of objects) {
    if (!object.metadata?.name) problems.push(`${object.kind}: no metadata.name`);
    const crd = validators.crds[object.kind];
    if (crd) problems.push(...crd(object));
    else for (const validate of validators.kubernetes) problems.push(...validate(object));
  }
  return [...new Set(problems)];
}
