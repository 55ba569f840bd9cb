import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';
import type { Reply } from './https-client.js';

export const openapiPath = fileURLToPath(new URL('../../openapi.yaml', import.meta.url));

interface HeaderObject {
  $ref?: string;
  required?: boolean;
  schema?: unknown;
}
interface ResponseObject {
  $ref?: string;
  content?: Record<string, { schema?: unknown }>;
  headers?: Record<string, HeaderObject>;
}
interface Operation {
  responses: Record<string, ResponseObject>;
}
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
  components: { responses: Record<string, ResponseObject>; headers: Record<string, HeaderObject>; schemas: Record<string, unknown> };
}

export const openapi = parse(readFileSync(openapiPath, 'utf8')) as OpenApiDocument;

// ajv-formats is CommonJS: imported from ES modules its default export is module.exports.
const addFormats = addFormatsModule.default;
// The whole document under one id, so that any schema in it compiles by JSON pointer with its refs.
const DOCUMENT_ID = 'urn:auth:openapi';
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

interface Documented {
  response: ResponseObject;
  pointer: string;
  where: string;
}

function resolveResponse(response: ResponseObject, pointer: string): { response: ResponseObject; pointer: string } {
  if (response.$ref === undefined) return { response, pointer };
  const name = response.$ref.replace('#/components/responses/', '');
  return { response: openapi.components.responses[name]!, pointer: `/components/responses/${escape(name)}` };
}

function documentedResponse(method: string, path: string, status: number): Documented {
  const pathname = path.split('?')[0]!;
  const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  const where = `${method} ${pathname}`;
  const item = openapi.paths[pathname];
  const operation = item?.[verb] as Operation | undefined;
  if (operation !== undefined) {
    const response = operation.responses[String(status)];
    if (response === undefined) throw new Error(`${where} answered ${status}, which openapi.yaml does not document`);
    return { ...resolveResponse(response, `/paths/${escape(pathname)}/${verb}/responses/${status}`), where };
  }
  const expected = item === undefined ? { status: 404, name: 'NotFound' } : { status: 405, name: 'MethodNotAllowed' };
  if (status !== expected.status) throw new Error(`${where} (not an operation of openapi.yaml) answered ${status}, expected ${expected.status}`);
  return { response: openapi.components.responses[expected.name]!, pointer: `/components/responses/${expected.name}`, where };
}

function headerValues(reply: Reply, name: string): string[] {
  if (name.toLowerCase() === 'set-cookie') return reply.cookies;
  const value = reply.headers.get(name);
  return value === null ? [] : [value];
}

/** A header's values against the schema of the named header component. */
function checkHeaderValues(documented: Documented, reply: Reply, name: string, component: string, values: string[]): void {
  const validate = validatorAt(`/components/headers/${escape(component)}/schema`);
  for (const value of values) {
    if (!validate(value)) throw new Error(`${documented.where} ${reply.status}: header ${name} does not match openapi.yaml: ${ajv.errorsText(validate.errors)}`);
  }
}

function checkHeaders(documented: Documented, reply: Reply): void {
  for (const [name, declared] of Object.entries(documented.response.headers ?? {})) {
    const component = declared.$ref?.replace('#/components/headers/', '');
    const header = component === undefined ? declared : openapi.components.headers[component]!;
    const values = headerValues(reply, name);
    if (header.required === true && values.length === 0) throw new Error(`${documented.where} ${reply.status}: required header ${name} is missing`);
    if (component !== undefined) checkHeaderValues(documented, reply, name, component, values);
  }
}

function checkBody(documented: Documented, reply: Reply, bodyExpected: boolean): void {
  const content = documented.response.content;
  if (content === undefined || !bodyExpected) {
    if (reply.text !== '') throw new Error(`${documented.where} ${reply.status}: documented without a body but answered ${JSON.stringify(reply.text.slice(0, 200))}`);
    return;
  }
  const mediaType = (reply.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (content[mediaType] === undefined) throw new Error(`${documented.where} ${reply.status}: content type ${mediaType || '(none)'} is not documented`);
  const validate = validatorAt(`${documented.pointer}/content/${escape(mediaType)}/schema`);
  const value = mediaType === 'application/json' ? reply.json() : reply.text;
  if (!validate(value)) throw new Error(`${documented.where} ${reply.status}: body ${reply.text.slice(0, 300)} does not match openapi.yaml: ${ajv.errorsText(validate.errors)}`);
}

/**
 * Fails unless openapi.yaml documents this answer for the method and path: the status is listed,
 * required headers are present (and match their schema where one is named), and the body
 * validates against the schema of its content type.
 */
export function assertDocumented(method: string, path: string, reply: Reply): void {
  const documented = documentedResponse(method, path, reply.status);
  checkHeaders(documented, reply);
  checkBody(documented, reply, method.toUpperCase() !== 'HEAD');
}
