import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';

export interface HeaderObject {
  $ref?: string;
  required?: boolean;
  schema?: unknown;
}
export interface ResponseObject {
  $ref?: string;
  content?: Record<string, { schema?: unknown }>;
  headers?: Record<string, HeaderObject>;
}
export interface OperationObject {
  responses: Record<string, ResponseObject>;
  requestBody?: Record<string, unknown>;
  parameters?: unknown[];
  security?: unknown[];
}
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OperationObject>>;
  components: { responses: Record<string, ResponseObject>; headers?: Record<string, HeaderObject>; schemas: Record<string, unknown> };
}

/** A response as the contract looks at it; each service's tests adapt their own response type. */
export interface ContractResponse {
  status: number;
  text: string;
  /** The values of a header, none when it is absent. */
  header: (name: string) => string[];
  /** The body parsed as JSON (asked only when the content type is application/json). */
  json: () => unknown;
}

export interface OpenApiContractOptions<R> {
  /** The id the document is registered under in ajv, e.g. `urn:auth:openapi`. */
  id: string;
  /**
   * The path template of openapi.yaml a request path falls under (undefined: the API has no such
   * path). By default a path without parameters: the request path less its query, if the document lists it.
   */
  templateOf?: (path: string) => string | undefined;
  /**
   * For a request the document lists no operation for (template undefined: no such path; else: a
   * method the path lacks), the statuses it may be answered with, each by the name of its component
   * response. None by default: such a request fails the check.
   */
  undocumented?: (template: string | undefined) => Partial<Record<number, string>>;
  /** The response in the form the contract checks. */
  view: (response: R) => ContractResponse;
}

export interface OpenApiContract<R> {
  document: OpenApiDocument;
  /**
   * Fails unless the response is one that openapi.yaml documents for this method and path: the
   * status is listed, required headers are present (and match their schema where a header component
   * is named), and the body validates against the schema of its content type (no body where none is
   * documented, and never one for HEAD, which is checked as GET).
   */
  assertDocumented: (method: string, path: string, response: R) => void;
}

// ajv-formats is CommonJS: imported from ES modules its default export is module.exports, whose `default` is the plugin.
const addFormats = addFormatsModule.default;

/** The values of a header of a fetch response (`ContractResponse.header`). */
export function headerValues(headers: Headers, name: string): string[] {
  const value = headers.get(name);
  return value === null ? [] : [value];
}

/** A JSON pointer segment, percent-encoded for use in a URI fragment (`/{name}` → `~1%7Bname%7D`). */
const escape = (segment: string): string => encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'));

interface Documented {
  response: ResponseObject;
  pointer: string;
  where: string;
}

/** Loads an OpenAPI 3.1 document (YAML) and checks responses against it. */
export function loadOpenApiContract<R>(documentPath: string, options: OpenApiContractOptions<R>): OpenApiContract<R> {
  const document = parse(readFileSync(documentPath, 'utf8')) as OpenApiDocument;

  // OpenAPI 3.1 schemas are JSON Schema 2020-12. The whole document is registered under one id, so a
  // schema anywhere in it is compiled by JSON pointer and its `#/components/...` references resolve.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema(document, options.id);
  const validators = new Map<string, ValidateFunction>();
  const templateOf =
    options.templateOf ??
    ((path: string): string | undefined => {
      const pathname = path.split('?')[0]!;
      return Object.hasOwn(document.paths, pathname) ? pathname : undefined;
    });

  function validatorAt(pointer: string): ValidateFunction {
    let validate = validators.get(pointer);
    if (validate === undefined) {
      validate = ajv.compile({ $ref: `${options.id}#${pointer}` });
      validators.set(pointer, validate);
    }
    return validate;
  }

  function componentResponse(name: string): { response: ResponseObject; pointer: string } {
    const response = document.components.responses[name];
    if (response === undefined) throw new Error(`openapi.yaml has no response component ${name}`);
    return { response, pointer: `/components/responses/${escape(name)}` };
  }

  function resolveResponse(response: ResponseObject, pointer: string): { response: ResponseObject; pointer: string } {
    if (response.$ref === undefined) return { response, pointer };
    return componentResponse(response.$ref.replace('#/components/responses/', ''));
  }

  function documentedResponse(method: string, path: string, res: ContractResponse): Documented {
    const template = templateOf(path);
    const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    const where = `${method} ${template ?? path}`;
    const operation = template === undefined ? undefined : document.paths[template]?.[verb];
    if (operation !== undefined) {
      const response = operation.responses[String(res.status)];
      if (response === undefined) throw new Error(`${where} answered ${res.status}, which openapi.yaml does not document: ${res.text.slice(0, 200)}`);
      return { ...resolveResponse(response, `/paths/${escape(template!)}/${verb}/responses/${res.status}`), where };
    }
    return { ...undocumentedResponse(template, where, res.status), where };
  }

  /** The component response a request the document lists no operation for may be answered with. */
  function undocumentedResponse(template: string | undefined, where: string, status: number): { response: ResponseObject; pointer: string } {
    const fallback = options.undocumented?.(template) ?? {};
    const name = fallback[status];
    if (name === undefined) throw new Error(`${where} (not an operation of openapi.yaml) answered ${status}; expected one of ${Object.keys(fallback).join(', ') || '(none)'}`);
    return componentResponse(name);
  }

  /** A header's values against the schema of the named header component. */
  function checkHeaderValues(documented: Documented, res: ContractResponse, name: string, component: string): void {
    const validate = validatorAt(`/components/headers/${escape(component)}/schema`);
    for (const value of res.header(name)) {
      if (!validate(value)) throw new Error(`${documented.where} ${res.status}: header ${name} does not match openapi.yaml: ${ajv.errorsText(validate.errors)}`);
    }
  }

  function checkHeaders(documented: Documented, res: ContractResponse): void {
    for (const [name, declared] of Object.entries(documented.response.headers ?? {})) {
      const component = declared.$ref?.replace('#/components/headers/', '');
      const header = component === undefined ? declared : document.components.headers?.[component];
      if (header === undefined) throw new Error(`dangling reference ${declared.$ref}`);
      if (header.required === true && res.header(name).length === 0) throw new Error(`${documented.where} ${res.status}: header ${name} is documented as required but missing`);
      if (component !== undefined) checkHeaderValues(documented, res, name, component);
    }
  }

  function checkBody(documented: Documented, res: ContractResponse, bodyExpected: boolean): void {
    const content = documented.response.content;
    if (content === undefined || !bodyExpected) {
      if (res.text !== '') throw new Error(`${documented.where} ${res.status}: documented without a body but answered ${JSON.stringify(res.text.slice(0, 200))}`);
      return;
    }
    const mediaType = (res.header('content-type')[0] ?? '').split(';')[0]!.trim();
    if (content[mediaType] === undefined) {
      throw new Error(`${documented.where} ${res.status}: content type ${mediaType || '(none)'} is not documented (${Object.keys(content).join(', ')})`);
    }
    const validate = validatorAt(`${documented.pointer}/content/${escape(mediaType)}/schema`);
    const value = mediaType === 'application/json' ? res.json() : res.text;
    if (!validate(value)) {
      throw new Error(`${documented.where} ${res.status}: body ${res.text.slice(0, 300)} does not match openapi.yaml: ${ajv.errorsText(validate.errors)}`);
    }
  }

  return {
    document,
    assertDocumented: (method, path, response) => {
      const res = options.view(response);
      const documented = documentedResponse(method, path, res);
      checkHeaders(documented, res);
      checkBody(documented, res, method.toUpperCase() !== 'HEAD');
    },
  };
}

/**
 * Fails unless the document is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator).
 * It throws rather than calls jest's expect, so that the fixtures importing this module also run
 * outside jest (make bench).
 */
export async function expectValidOpenApi31(document: OpenApiDocument): Promise<void> {
  const result = await new Validator().validate(document as unknown as Record<string, unknown>);
  if (result.errors !== undefined || !result.valid) throw new Error(`not a valid OpenAPI document: ${JSON.stringify(result.errors)}`);
  if (!/^3\.1\./.test(document.openapi)) throw new Error(`openapi ${document.openapi}, not 3.1.x`);
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The document's operations as [`METHOD /path`, operation], seen as `O` (a service's narrower view of an operation). */
export function operationsOf<O = OperationObject>(document: OpenApiDocument): Array<readonly [string, O]> {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation as O] as const),
  );
}
