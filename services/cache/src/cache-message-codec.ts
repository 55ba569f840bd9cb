import { isUtf8 } from 'node:buffer';
import type { ServiceDefinition } from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type { CacheRequest__Output, CacheResponse } from '@sp/cache-client';

/**
 * CacheRequest and CacheResponse, the messages of every Get, Set and Remove, read and written by
 * hand: protobufjs through proto-loader builds a Reader, a message, Long objects and a second
 * plain object per request, and a message, a Writer and an object per field per response. Only
 * the shapes the service sees every call are handled here, with exactly protobufjs' results; for
 * anything else (a key that is not UTF-8, a known field with another wire type, groups, a
 * negative or huge int64, a truncated message) the functions answer undefined and the caller
 * uses protobufjs, so unusual input keeps protobufjs' outcome, errors included.
 */

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_BYTES = 2;
const WIRE_FIXED32 = 5;
/** int64 varints of up to 7 bytes (49 bits) are read here: positive, and exact in a double. */
const MAX_INT64_BYTES = 7;
/** A value absent or empty: protobufjs gives a fresh empty Buffer; one that holds no byte can be shared. */
const EMPTY = Buffer.alloc(0);

/** A decoding position; `at` is -1 once the input turned out not to be one this reader handles. */
interface Cursor {
  bytes: Buffer;
  at: number;
}

/** An unsigned varint of at most `maxBytes` bytes, or -1 (too long or truncated). */
function varint(cursor: Cursor, maxBytes: number): number {
  const { bytes } = cursor;
  let value = 0;
  let scale = 1;
  for (let i = 0; i < maxBytes && cursor.at < bytes.length; i++) {
    const byte = bytes[cursor.at++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return value;
    scale *= 128;
  }
  cursor.at = -1;
  return -1;
}

/** The end of a length-delimited field starting at the cursor (which moves to its start), or -1. */
function delimited(cursor: Cursor): number {
  const length = varint(cursor, 5);
  if (cursor.at < 0 || cursor.at + length > cursor.bytes.length) return -1;
  return cursor.at + length;
}

function advance(cursor: Cursor, end: number): boolean {
  if (end < 0 || end > cursor.bytes.length) return false;
  cursor.at = end;
  return true;
}

/** Moves past a field this reader does not know; false when it cannot (a group, a truncated field). */
function skip(cursor: Cursor, wireType: number): boolean {
  switch (wireType) {
    case WIRE_VARINT:
      return varint(cursor, 10) >= 0;
    case WIRE_BYTES:
      return advance(cursor, delimited(cursor));
    case WIRE_FIXED64:
      return advance(cursor, cursor.at + 8);
    case WIRE_FIXED32:
      return advance(cursor, cursor.at + 4);
    default:
      return false;
  }
}

/** The key as protobufjs decodes it, or undefined when its bytes are not UTF-8 (they decode to U+FFFD). */
function utf8Key(bytes: Buffer, start: number, end: number): string | undefined {
  const key = bytes.toString('utf8', start, end);
  // Invalid bytes always decode to U+FFFD, so a key without one needs no second look.
  return key.includes('\uFFFD') && !isUtf8(bytes.subarray(start, end)) ? undefined : key;
}

function readKey(cursor: Cursor, request: CacheRequest__Output): boolean {
  const end = delimited(cursor);
  const key = end < 0 ? undefined : utf8Key(cursor.bytes, cursor.at, end);
  if (key === undefined) return false;
  request.key = key;
  return advance(cursor, end);
}

function readValue(cursor: Cursor, request: CacheRequest__Output): boolean {
  const end = delimited(cursor);
  if (end < 0) return false;
  request.value = end === cursor.at ? EMPTY : cursor.bytes.subarray(cursor.at, end);
  return advance(cursor, end);
}

/** Reads one field of a CacheRequest into `request`; false when protobufjs must decide. */
function readField(cursor: Cursor, request: CacheRequest__Output): boolean {
  const tag = varint(cursor, 5);
  const field = tag >>> 3;
  const wireType = tag & 7;
  if (field === 1 && wireType === WIRE_BYTES) return readKey(cursor, request);
  if (field === 2 && wireType === WIRE_BYTES) return readValue(cursor, request);
  if (field === 3 && wireType === WIRE_VARINT) {
    request.ttlMs = varint(cursor, MAX_INT64_BYTES);
    return cursor.at >= 0;
  }
  // Fields 1-3 with another wire type, field 0 and malformed tags are protobufjs' to judge.
  return tag > 0 && field > 3 && skip(cursor, wireType);
}

/**
 * A CacheRequest as proto-loader decodes it for the service (`defaults: true`, `longs: Number`:
 * absent fields are '', an empty Buffer and 0; the value a view on the message), or undefined when
 * protobufjs must decide (see the module's comment).
 */
export function decodeCacheRequest(bytes: Buffer): CacheRequest__Output | undefined {
  const cursor: Cursor = { bytes, at: 0 };
  const request: CacheRequest__Output = { key: '', value: EMPTY, ttlMs: 0 };
  while (cursor.at < bytes.length) if (!readField(cursor, request)) return undefined;
  return request;
}

const varintBytes = (value: number): number => {
  let count = 1;
  for (let rest = value; rest >= 0x80; rest = Math.floor(rest / 128)) count++;
  return count;
};

function writeVarint(target: Buffer, at: number, value: number): number {
  let rest = value;
  let position = at;
  while (rest >= 0x80) {
    target[position++] = (rest % 128) | 0x80;
    rest = Math.floor(rest / 128);
  }
  target[position++] = rest;
  return position;
}

/**
 * A CacheResponse in protobufjs' bytes for the objects the service answers with (all three
 * fields set, each written even when it is its default, as protobufjs writes a set field), or
 * undefined for any other shape.
 */
export function encodeCacheResponse(response: CacheResponse): Buffer | undefined {
  const { found, value, expiresAtUnixMs } = response;
  if (typeof found !== 'boolean' || !(value instanceof Uint8Array) || typeof expiresAtUnixMs !== 'number' || !Number.isSafeInteger(expiresAtUnixMs) || expiresAtUnixMs < 0) return undefined;
  const encoded = Buffer.allocUnsafe(2 + 1 + varintBytes(value.length) + value.length + 1 + varintBytes(expiresAtUnixMs));
  encoded[0] = (1 << 3) | WIRE_VARINT;
  encoded[1] = found ? 1 : 0;
  encoded[2] = (2 << 3) | WIRE_BYTES;
  let at = writeVarint(encoded, 3, value.length);
  encoded.set(value, at);
  at += value.length;
  encoded[at++] = (3 << 3) | WIRE_VARINT;
  writeVarint(encoded, at, expiresAtUnixMs);
  return encoded;
}

const messageName = (type: MethodDefinition<unknown, unknown>['requestType']): string | undefined => ('name' in type.type && typeof type.type.name === 'string' ? type.type.name : undefined);

/**
 * The service definition with the methods that take a CacheRequest decoding it by hand, and those
 * answering a CacheResponse encoding it by hand, each falling back to the definition's own
 * (protobufjs) function for what the hand-written one leaves to it.
 */
export function withCacheMessageCodec<D extends ServiceDefinition>(definition: D): D {
  const methods: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(definition) as [string, MethodDefinition<unknown, unknown>][]) {
    const { requestDeserialize, responseSerialize } = method;
    methods[name] = {
      ...method,
      ...(messageName(method.requestType) === 'CacheRequest' ? { requestDeserialize: (bytes: Buffer) => decodeCacheRequest(bytes) ?? requestDeserialize(bytes) } : {}),
      ...(messageName(method.responseType) === 'CacheResponse' ? { responseSerialize: (response: CacheResponse) => encodeCacheResponse(response) ?? responseSerialize(response) } : {}),
    };
  }
  return methods as D;
}
