/** Turns values of one type into the bytes the cache stores, and back. */
export interface Serializer<T> {
  serialize(value: T): Buffer;
  deserialize(bytes: Buffer): T;
}

/** The default: any JSON-compatible value. */
export const jsonSerializer: Serializer<unknown> = {
  serialize: (value) => Buffer.from(JSON.stringify(value), 'utf8'),
  deserialize: (bytes) => JSON.parse(bytes.toString('utf8')) as unknown,
};

/** Strings pass through as UTF-8. */
export const stringSerializer: Serializer<string> = {
  serialize: (value) => Buffer.from(value, 'utf8'),
  deserialize: (bytes) => bytes.toString('utf8'),
};

/** Buffers pass through untouched. */
export const bufferSerializer: Serializer<Buffer> = {
  serialize: (value) => value,
  deserialize: (bytes) => bytes,
};
