import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { cacheProtoPath, cacheServiceDefinition, type CacheResponse } from '@sp/cache-client';
import { decodeCacheRequest, encodeCacheResponse, withCacheMessageCodec } from '../src/cache-message-codec.js';
import { keysAreUtf8, refusingInvalidUtf8Keys } from '../src/utf8-keys.js';

// The reference is what the service used before: proto-loader's protobufjs codec of the same
// definition, with the same options (defaults, longs as numbers).
const reference = cacheServiceDefinition();
const protobufDecode = (bytes: Buffer): unknown => reference.Get.requestDeserialize(bytes);
const protobufEncode = (response: CacheResponse): Buffer => reference.Get.responseSerialize(response);
const checking = refusingInvalidUtf8Keys(cacheServiceDefinition());
const service = withCacheMessageCodec(checking);
const serviceDecode = (bytes: Buffer): unknown => service.Get.requestDeserialize(bytes);

const CacheRequest = protobuf.loadSync(cacheProtoPath).lookupType('cache.v1.CacheRequest');
const encodeRequest = (fields: Record<string, unknown>, after: (writer: protobuf.Writer) => protobuf.Writer = (w) => w): Buffer =>
  Buffer.from(after(CacheRequest.encode(CacheRequest.fromObject(fields))).finish());
/** Fields the proto does not have (a newer client's), of every wire type protobuf skips. */
const unknownFields = (writer: protobuf.Writer): protobuf.Writer =>
  writer
    .uint32((7 << 3) | 0)
    .int64(-5)
    .uint32((8 << 3) | 1)
    .fixed64(123)
    .uint32((9 << 3) | 2)
    .bytes(Buffer.from('later'))
    .uint32((10 << 3) | 5)
    .fixed32(7)
    .uint32((2000 << 3) | 2)
    .bytes(Buffer.alloc(300, 1));

const LARGE = Buffer.alloc(1024 * 1024, 7);
/** A decoded request with its value as base64: jest compares a 1 MiB Buffer byte by byte, slowly. */
const comparable = (request: unknown): unknown => {
  const { value, ...rest } = request as { value: Buffer };
  return { ...rest, value: value.toString('base64') };
};

describe('CacheRequest decoded by hand', () => {
  it.each([
    ['an empty message (every field absent)', {}],
    ['a key alone', { key: 'session:abc' }],
    ['a unicode key', { key: 'a-é-✓-😀-中文' }],
    ['a key holding U+FFFD itself', { key: 'x\uFFFDy' }],
    ['an empty value', { key: 'k', value: Buffer.alloc(0) }],
    ['a 100-byte value', { key: 'k', value: Buffer.alloc(100, 'v') }],
    ['a 1 MiB value', { key: 'k', value: LARGE }],
    ['a ttl of 0 written out', { key: 'k', ttlMs: 0 }],
    ['a ttl of 365 days', { key: 'k', value: Buffer.from('v'), ttlMs: 365 * 24 * 3600 * 1000 }],
    ['the largest ttl read by hand (2^49 - 1)', { key: 'k', ttlMs: 2 ** 49 - 1 }],
  ])('should decode %s as protobufjs does', (_case, fields) => {
    const bytes = encodeRequest(fields);
    expect(comparable(decodeCacheRequest(bytes))).toEqual(comparable(protobufDecode(bytes)));
  });

  it('should skip unknown fields of every wire type, before, between and after the known ones', () => {
    const bytes = Buffer.concat([
      Buffer.from(unknownFields(protobuf.Writer.create()).finish()),
      encodeRequest({ key: 'k', value: Buffer.from('v') }, unknownFields),
      encodeRequest({ ttlMs: 60_000 }),
    ]);
    const decoded = decodeCacheRequest(bytes);
    expect(decoded).toEqual({ key: 'k', value: Buffer.from('v'), ttlMs: 60_000 });
    expect(decoded).toEqual(protobufDecode(bytes));
  });

  it('should keep the last of a field sent twice, as protobufjs does', () => {
    const bytes = Buffer.concat([encodeRequest({ key: 'first', value: Buffer.from('1') }), encodeRequest({ key: 'second', ttlMs: 5 })]);
    expect(decodeCacheRequest(bytes)).toEqual(protobufDecode(bytes));
    expect(decodeCacheRequest(bytes)?.key).toBe('second');
  });

  it.each([
    ['a negative ttl (a 10-byte varint)', encodeRequest({ key: 'k', ttlMs: -1 })],
    ['int64 max as the ttl', encodeRequest({ key: 'k', ttlMs: '9223372036854775807' })],
    ['a ttl of 2^49 (an 8-byte varint)', encodeRequest({ key: 'k', ttlMs: 2 ** 49 })],
    ['the key with the varint wire type', Buffer.from(protobuf.Writer.create().uint32((1 << 3) | 0).uint32(5).finish())],
    ['a group (wire types 3 and 4)', Buffer.from(protobuf.Writer.create().uint32((9 << 3) | 3).uint32((9 << 3) | 4).finish())],
  ])('should leave %s to protobufjs, with its result', (_case, bytes) => {
    expect(decodeCacheRequest(bytes)).toBeUndefined();
    expect(serviceDecode(bytes)).toEqual(protobufDecode(bytes));
  });

  it.each([
    ['a truncated value', encodeRequest({ key: 'k', value: Buffer.alloc(10) }).subarray(0, 8)],
    ['a truncated varint', Buffer.from([0x18, 0x80])],
  ])('should leave %s to protobufjs, which refuses it', (_case, bytes) => {
    expect(decodeCacheRequest(bytes)).toBeUndefined();
    expect(() => protobufDecode(bytes)).toThrow();
    expect(() => serviceDecode(bytes)).toThrow();
  });

  it('should leave a key that is not UTF-8 to the checking decoder, which marks it', () => {
    const bytes = Buffer.from(protobuf.Writer.create().uint32((1 << 3) | 2).bytes(Buffer.from([0x61, 0xff])).finish());
    expect(decodeCacheRequest(bytes)).toBeUndefined();
    const request = serviceDecode(bytes) as object;
    expect(request).toEqual(protobufDecode(bytes));
    expect(keysAreUtf8(request)).toBe(false);
  });

  it('should decode any request with unknown fields anywhere exactly as protobufjs does', () => {
    const field = fc.oneof(
      fc.record({ key: fc.string({ unit: 'binary', maxLength: 64 }) }),
      fc.record({ value: fc.uint8Array({ maxLength: 300 }) }),
      fc.record({ ttlMs: fc.oneof(fc.integer({ min: 0, max: 2 ** 53 - 1 }), fc.integer({ min: -(2 ** 31), max: -1 })) }),
      fc.constant('unknown' as const),
    );
    fc.assert(
      fc.property(fc.array(field, { maxLength: 6 }), (fields) => {
        const bytes = Buffer.concat(fields.map((f) => (f === 'unknown' ? Buffer.from(unknownFields(protobuf.Writer.create()).finish()) : encodeRequest(f))));
        expect(serviceDecode(bytes)).toEqual(protobufDecode(bytes));
      }),
      { numRuns: 500 },
    );
  });
});

describe('CacheResponse encoded by hand', () => {
  it.each([
    ['a miss', { found: false, value: Buffer.alloc(0), expiresAtUnixMs: 0 }],
    ['a hit without expiry', { found: true, value: Buffer.alloc(100, 'v'), expiresAtUnixMs: 0 }],
    ['a hit with an empty value', { found: true, value: Buffer.alloc(0), expiresAtUnixMs: 1_764_000_000_000 }],
    ['a hit with a 1 MiB value', { found: true, value: LARGE, expiresAtUnixMs: 1_764_000_000_000 }],
    ['the largest safe expiry', { found: true, value: Buffer.from('é✓'), expiresAtUnixMs: Number.MAX_SAFE_INTEGER }],
  ])('should write %s byte for byte as protobufjs does', (_case, response) => {
    expect(encodeCacheResponse(response)!.equals(protobufEncode(response))).toBe(true);
  });

  it('should write any response of the service byte for byte as protobufjs does', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.uint8Array({ maxLength: 20_000 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (found, value, expiresAtUnixMs) => {
        const response = { found, value: Buffer.from(value), expiresAtUnixMs };
        expect(encodeCacheResponse(response)).toEqual(protobufEncode(response));
      }),
      { numRuns: 500 },
    );
  });

  it.each([
    ['an absent field', { found: true, value: Buffer.from('v') }],
    ['a value given as base64 text', { found: true, value: 'dg==', expiresAtUnixMs: 0 }],
    ['an expiry as a decimal string', { found: true, value: Buffer.from('v'), expiresAtUnixMs: '5' }],
  ])('should leave %s to protobufjs, with its bytes', (_case, response: CacheResponse) => {
    expect(encodeCacheResponse(response)).toBeUndefined();
    expect(service.Get.responseSerialize(response)).toEqual(protobufEncode(response));
  });

  it('should round-trip through protobufjs: what it decodes is what was sent', () => {
    const response = { found: true, value: Buffer.from('a-é-✓-😀'), expiresAtUnixMs: 1_764_000_000_123 };
    expect(reference.Get.responseDeserialize(encodeCacheResponse(response)!)).toEqual(response);
  });
});

describe('the service definition with the hand-written codec', () => {
  it('should decode CacheRequest and encode CacheResponse by hand, and leave the other messages to protobufjs', () => {
    const original = checking;
    for (const name of ['Get', 'Set', 'Remove', 'SetIfAbsent', 'RemoveIfEquals'] as const) {
      expect(service[name].requestDeserialize).not.toBe(original[name].requestDeserialize);
      expect(service[name].responseSerialize).not.toBe(original[name].responseSerialize);
    }
    expect(service.GetMany.requestDeserialize).toBe(original.GetMany.requestDeserialize);
    expect(service.Increment.responseSerialize).toBe(original.Increment.responseSerialize);
    expect(service.Subscribe.responseSerialize).toBe(original.Subscribe.responseSerialize);
  });
});
