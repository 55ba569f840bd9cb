import { isUtf8 } from 'node:buffer';
import type { ServiceDefinition } from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import type { IDescriptorProto } from 'protobufjs/ext/descriptor/index.js';

/**
 * Requests whose keys arrived as bytes that are not UTF-8. protobufjs decodes a proto `string`
 * field with Node's UTF-8 decoder, which turns every invalid sequence into U+FFFD: keys `<FF>`,
 * `<FE>` and `<EF BF BD>` would all become "\uFFFD" and share one entry (or one watched prefix).
 * The proto says keys are UTF-8, so such a request is refused (validation.ts, subscribe-rpc.ts).
 */
const invalidKeys = new WeakSet<object>();

/**
 * Whether every key of the request (`key`, `keys` or `prefixes`) arrived as valid UTF-8 (always,
 * for a request not decoded by `refusingInvalidUtf8Keys`' definition).
 */
export const keysAreUtf8 = (request: object): boolean => !invalidKeys.has(request);

/** The string fields that name keys: CacheRequest.key, IncrementRequest.key, GetManyRequest.keys, SubscribeRequest.prefixes. */
const KEY_FIELDS: ReadonlySet<string> = new Set(['key', 'keys', 'prefixes']);

interface KeyField {
  name: string;
  number: number;
  repeated: boolean;
}

const hasFields = (type: object): type is IDescriptorProto => Array.isArray((type as IDescriptorProto).field);

/** The request message's string fields that name keys, singular or repeated. */
function keyFields(method: MethodDefinition<unknown, unknown>): KeyField[] {
  const type = method.requestType.type;
  if (!hasFields(type)) return [];
  return (type.field ?? []).flatMap((field) =>
    field.name && KEY_FIELDS.has(field.name) && String(field.type) === 'TYPE_STRING' && typeof field.number === 'number'
      ? [{ name: field.name, number: field.number, repeated: String(field.label) === 'LABEL_REPEATED' }]
      : [],
  );
}

/** The decoded strings of one field: its value, or each of a repeated field's. */
function stringsOf(request: unknown, name: string): unknown[] {
  if (typeof request !== 'object' || request === null) return [];
  const value = (request as Record<string, unknown>)[name];
  return Array.isArray(value) ? value : [value];
}

const replaced = (value: unknown): boolean => typeof value === 'string' && value.includes('\uFFFD');

/** The request's deserializer, marking requests whose key bytes are not UTF-8. */
function checkingDeserializer(method: MethodDefinition<unknown, unknown>, fields: readonly KeyField[]): (bytes: Buffer) => unknown {
  // The same message seen with only its key fields, as bytes: unknown fields (a 1 MiB value)
  // are skipped by their length, not decoded.
  const rawKeys = new protobuf.Type('RawKeys');
  for (const field of fields) rawKeys.add(new protobuf.Field(field.name, field.number, 'bytes', field.repeated ? 'repeated' : undefined));
  return (bytes) => {
    const request: unknown = method.requestDeserialize(bytes);
    // Invalid bytes always decode to U+FFFD, so keys without one need no second look.
    if (fields.some((field) => stringsOf(request, field.name).some(replaced))) {
      const raw = rawKeys.toObject(rawKeys.decode(bytes)) as Record<string, Uint8Array | Uint8Array[] | undefined>;
      if (fields.some((field) => [raw[field.name] ?? []].flat().some((key) => !isUtf8(key)))) invalidKeys.add(request as object);
    }
    return request;
  };
}

/**
 * The service definition with each method whose request has string keys (`key`, `keys`,
 * `prefixes`) decoding it so that `keysAreUtf8` can tell whether their bytes on the wire were UTF-8.
 */
export function refusingInvalidUtf8Keys<D extends ServiceDefinition>(definition: D): D {
  const methods: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(definition) as [string, MethodDefinition<unknown, unknown>][]) {
    const fields = keyFields(method);
    methods[name] = fields.length === 0 ? method : { ...method, requestDeserialize: checkingDeserializer(method, fields) };
  }
  return methods as D;
}
