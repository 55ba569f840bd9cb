import { isUtf8 } from 'node:buffer';
import type { ServiceDefinition } from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import type { IDescriptorProto } from 'protobufjs/ext/descriptor/index.js';

/**
 * Requests whose key arrived as bytes that are not UTF-8. protobufjs decodes a proto `string`
 * field with Node's UTF-8 decoder, which turns every invalid sequence into U+FFFD: keys `<FF>`,
 * `<FE>` and `<EF BF BD>` would all become "\uFFFD" and share one entry. The proto says a key is
 * UTF-8, so such a request is refused (validation.ts) instead.
 */
const invalidKeys = new WeakSet<object>();

/** Whether the request's key arrived as valid UTF-8 (always, for a request not decoded by `refusingInvalidUtf8Keys`' definition). */
export const keyIsUtf8 = (request: object): boolean => !invalidKeys.has(request);

const hasFields = (type: object): type is IDescriptorProto => Array.isArray((type as IDescriptorProto).field);

/** The field number of the request message's string field `key`, if it has one. */
function keyFieldNumber(method: MethodDefinition<unknown, unknown>): number | undefined {
  const type = method.requestType.type;
  if (!hasFields(type)) return undefined;
  const field = type.field?.find((candidate) => candidate.name === 'key' && String(candidate.type) === 'TYPE_STRING');
  return field?.number ?? undefined;
}

const hasStringKey = (value: unknown): value is { key: string } => typeof value === 'object' && value !== null && typeof (value as { key?: unknown }).key === 'string';

/** The request's deserializer, marking requests whose key bytes are not UTF-8. */
function checkingDeserializer(method: MethodDefinition<unknown, unknown>, fieldNumber: number): (bytes: Buffer) => unknown {
  // The same message seen with only its key field, as bytes: unknown fields (a 1 MiB value)
  // are skipped by their length, not decoded.
  const rawKey = new protobuf.Type('RawKey').add(new protobuf.Field('key', fieldNumber, 'bytes'));
  return (bytes) => {
    const request: unknown = method.requestDeserialize(bytes);
    // Invalid bytes always decode to U+FFFD, so a key without one needs no second look.
    if (hasStringKey(request) && request.key.includes('\uFFFD')) {
      const { key } = rawKey.toObject(rawKey.decode(bytes)) as { key?: Uint8Array };
      if (key !== undefined && !isUtf8(key)) invalidKeys.add(request);
    }
    return request;
  };
}

/**
 * The service definition with each method whose request has a string `key` decoding it so that
 * `keyIsUtf8` can tell whether the key's bytes on the wire were UTF-8.
 */
export function refusingInvalidUtf8Keys<D extends ServiceDefinition>(definition: D): D {
  const methods: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(definition) as [string, MethodDefinition<unknown, unknown>][]) {
    const fieldNumber = keyFieldNumber(method);
    methods[name] = fieldNumber === undefined ? method : { ...method, requestDeserialize: checkingDeserializer(method, fieldNumber) };
  }
  return methods as D;
}
