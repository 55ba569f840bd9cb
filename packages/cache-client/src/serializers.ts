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

/**
 * JSON, parsed once per stored buffer: a near-cache hit hands the deserializer the same buffer
 * each time, so it gets the object parsed the first time instead of a new parse (a 2 KB session
 * record costs microseconds to parse, on every hit). Every caller then shares that object:
 * treat values read through it as immutable.
 */
export function memoizedJsonSerializer(): Serializer<unknown> {
  const parsed = new WeakMap<Buffer, unknown>();
  return {
    serialize: (value) => jsonSerializer.serialize(value),
    // One lookup on a near-cache hit: JSON.parse never yields undefined, so undefined means not parsed yet.
    deserialize(bytes) {
      let value = parsed.get(bytes);
      if (value === undefined) parsed.set(bytes, (value = jsonSerializer.deserialize(bytes)));
      return value;
    },
  };
}

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
