import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';

/** The document under test, parsed from services/webhooks/openapi.yaml. */
export const openapiPath = fileURLToPath(new URL('../../openapi.yaml', import.meta.url));

interface ResponseObject {
  $ref?: string;
  content?: Record<string, { schema?: unknown }>;
  headers?: Record<string, { required?: boolean }>;
}
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject>; requestBody?: Record<string, unknown>; parameters?: unknown[] }>>;
  components: { responses: Record<string, ResponseObject>; schemas: Record<string, unknown> };
}

export const openapi = parse(readFileSync(openapiPath, 'utf8')) as OpenApiDocument;

// ajv-formats is CommonJS: imported from ES modules its default export is module.exports, whose `default` is the plugin.
const addFormats = addFormatsModule.default;
const DOCUMENT_ID = 'urn:webhooks:openapi';
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
addFormats(ajv);
ajv.addSchema(openapi, DOCUMENT_ID);
const validators = new Map<string, ValidateFunction>();

function validatorAt(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (validate === undefined) {
    validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
    validators.set(pointer, validate);
  }
  return validate;
}

const escape = (segment: string): string => encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'));

export interface DocumentedResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** The documented response for a status, and its JSON pointer in the document (references resolved). */
function documentedResponse(method: string, path: string, res: DocumentedResponse): { response: ResponseObject; pointer: string } {
  const where = `${method} ${path}`;
  const operation = openapi.paths[path]?.[method.toLowerCase()];
  if (operation === undefined) throw new Error(`${where} is not an operation of openapi.yaml`);
  const response = operation.responses[String(res.status)];
  if (response === undefined) throw new Error(`${where} answered ${res.status}, which openapi.yaml does not document: ${res.text.slice(0, 200)}`);
  if (response.$ref === undefined) return { response, pointer: `/paths/${escape(path)}/${method.toLowerCase()}/responses/${res.status}` };
  const name = response.$ref.replace('#/components/responses/', '');
  return { response: openapi.components.responses[name]!, pointer: `/components/responses/${escape(name)}` };
}

/**
 * Fails unless openapi.yaml documents this answer for the method and path: the status is listed,
 * required headers are present, and the body matches the schema of its content type.
 */
export function assertDocumented(method: string, path: string, res: DocumentedResponse): void {
  const where = `${method} ${path} ${res.status}`;
  const { response, pointer } = documentedResponse(method, path, res);
  const missing = Object.entries(response.headers ?? {}).filter(([name, header]) => header.required === true && res.headers.get(name) === null);
  if (missing.length > 0) throw new Error(`${where}: header ${missing[0]![0]} is required but missing`);
  const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (response.content?.[mediaType] === undefined) throw new Error(`${where}: content type ${mediaType || '(none)'} is not documented`);
  const validate = validatorAt(`${pointer}/content/${escape(mediaType)}/schema`);
  const value: unknown = mediaType === 'application/json' ? JSON.parse(res.text) : res.text;
  if (!validate(value)) throw new Error(`${where}: body ${res.text.slice(0, 300)} does not match openapi.yaml: ${ajv.errorsText(validate.errors)}`);
}
