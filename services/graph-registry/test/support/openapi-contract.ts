import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';
import type { HttpResponse } from './http-client.js';

/** The document under test, as parsed from services/graph-registry/openapi.yaml. */
export const openapiPath = fileURLToPath(new URL('../../openapi.yaml', import.meta.url));

interface MediaType {
  schema?: unknown;
}
interface ResponseObject {
  $ref?: string;
  content?: Record<string, MediaType>;
  headers?: Record<string, { required?: boolean }>;
}
interface Operation {
  responses: Record<string, ResponseObject>;
}
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
  components: { responses: Record<string, ResponseObject>; schemas: Record<string, unknown> };
}

export const openapi = parse(readFileSync(openapiPath, 'utf8')) as OpenApiDocument;

// ajv-formats is CommonJS: imported from ES modules its default export is module.exports, whose `default` is the plugin.
const addFormats = addFormatsModule.default;

// OpenAPI 3.1 schemas are JSON Schema 2020-12. The whole document is registered under one id, so a
// schema anywhere in it is compiled by JSON pointer and its `#/components/...` references resolve.
const DOCUMENT_ID = 'urn:graph-registry:openapi';
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

/** A JSON pointer segment, percent-encoded for use in a URI fragment (`/{name}` → `~1%7Bname%7D`). */
const escape = (segment: string): string => encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'));

/** The path template a request path falls under, as this API routes it (undefined: no such path). */
export function templateOf(path: string): string | undefined {
  const pathname = path.split('?')[0]!.replace(/(.)\/$/, '$1');
  if (pathname === '/' || pathname === '/health' || pathname === '/schema') return pathname;
  return /^\/[^/]+$/.test(pathname) ? '/{name}' : undefined;
}

interface Documented {
  response: ResponseObject;
  pointer: string;
  where: string;
}

function resolveResponse(response: ResponseObject, pointer: string): { response: ResponseObject; pointer: string } {
  if (response.$ref === undefined) return { response, pointer };
  const name = response.$ref.replace('#/components/responses/', '');
  const target = openapi.components.responses[name];
  if (target === undefined) throw new Error(`dangling reference ${response.$ref}`);
  return { response: target, pointer: `/components/responses/${escape(name)}` };
}

/**
 * What the document says a response with this status must look like. Methods a path does not list
 * are answered with the documented 401 or 405 responses, paths the API does not have with 401 or 404.
 */
function documentedResponse(method: string, path: string, status: number): Documented {
  const template = templateOf(path);
  const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  const where = `${method} ${template ?? path}`;
  const operation = template === undefined ? undefined : (openapi.paths[template]?.[verb] as Operation | undefined);
  if (operation !== undefined) {
    const response = operation.responses[String(status)];
    if (response === undefined) throw new Error(`${where} answered ${status}, which openapi.yaml does not document`);
    return { ...resolveResponse(response, `/paths/${escape(template!)}/${verb}/responses/${status}`), where };
  }
  const fallback: Record<number, string> = template === undefined ? { 401: 'Unauthorized', 404: 'NotFound' } : { 401: 'Unauthorized', 405: 'MethodNotAllowed' };
  if (template === '/health') delete fallback[401];
  const name = fallback[status];
  if (name === undefined) throw new Error(`${where} (not an operation of openapi.yaml) answered ${status}; expected one of ${Object.keys(fallback).join(', ')}`);
  return { response: openapi.components.responses[name]!, pointer: `/components/responses/${name}`, where };
}

function checkHeaders(documented: Documented, res: HttpResponse): void {
  for (const [name, header] of Object.entries(documented.response.headers ?? {})) {
    if (header.required === true && res.headers[name.toLowerCase()] === undefined) {
      throw new Error(`${documented.where} ${res.status}: header ${name} is documented as required but missing`);
    }
  }
}

function checkBody(documented: Documented, res: HttpResponse, bodyExpected: boolean): void {
  const content = documented.response.content;
  if (content === undefined || !bodyExpected) {
    if (res.text !== '') throw new Error(`${documented.where} ${res.status}: documented without a body but answered ${JSON.stringify(res.text.slice(0, 200))}`);
    return;
  }
  const mediaType = (res.headers['content-type'] ?? '').split(';')[0]!.trim();
  if (content[mediaType] === undefined) {
    throw new Error(`${documented.where} ${res.status}: content type ${mediaType || '(none)'} is not documented (${Object.keys(content).join(', ')})`);
  }
  const validate = validatorAt(`${documented.pointer}/content/${escape(mediaType)}/schema`);
  const value = mediaType === 'application/json' ? res.json : res.text;
  if (!validate(value)) {
    throw new Error(`${documented.where} ${res.status}: body ${res.text.slice(0, 300)} does not match openapi.yaml: ${ajv.errorsText(validate.errors)}`);
  }
}

/**
 * Fails unless the response is one that openapi.yaml documents for this method and path: the
 * status is listed, required headers are present and the body validates against the schema of
 * its content type (no body where none is documented, and never one for HEAD).
 */
export function assertDocumented(method: string, path: string, res: HttpResponse): void {
  const documented = documentedResponse(method, path, res.status);
  checkHeaders(documented, res);
  checkBody(documented, res, method.toUpperCase() !== 'HEAD');
}
