const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \
/** What each byte outside strings does to the nesting: `{` and `[` open (+1), `}` and `]` close (-1). */
const NESTING = new Int8Array(256);
NESTING[0x7b] = 1;
NESTING[0x5b] = 1;
NESTING[0x7d] = -1;
NESTING[0x5d] = -1;

/** The index of the quote closing the string whose opening quote is at `start` (or the end of the text). */
function endOfString(text: Uint8Array, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === BACKSLASH) i++;
    else if (text[i] === QUOTE) return i;
  }
  return text.length;
}

/** How a JSON text is built, as far as parsing cost goes. */
export interface JsonShape {
  /** Deepest nesting of objects and arrays (counted up to the limit). */
  depth: number;
  /** Commas and colons outside strings: about twice the number of members and elements (counted up to the limit). */
  separators: number;
}

const COMMA = 0x2c;
const COLON = 0x3a;

/**
 * The nesting and the number of members and elements of a JSON text, each counted up to its
 * limit (it stops there): one pass over the bytes, skipping strings, without parsing. JSON.parse
 * takes time that grows with both beyond the text's size alone (a 256 KiB array nested 128k deep:
 * about 200 ms of event loop; 12,000 fields: 10-25 ms), so a body is checked with this first and
 * refused when it is built unlike any legitimate message. Malformed JSON is not detected here:
 * JSON.parse still rejects it.
 */
export function jsonShape(text: Uint8Array, limits: Partial<JsonShape> = {}): JsonShape {
  const maxDepth = limits.depth ?? Number.POSITIVE_INFINITY;
  const maxSeparators = limits.separators ?? Number.POSITIVE_INFINITY;
  let depth = 0;
  let deepest = 0;
  let separators = 0;
  for (let i = 0; i < text.length && deepest < maxDepth && separators < maxSeparators; i++) {
    const byte = text[i]!;
    if (byte === QUOTE) i = endOfString(text, i);
    else if (byte === COMMA || byte === COLON) separators++;
    depth += NESTING[byte]!;
    deepest = Math.max(deepest, depth);
  }
  return { depth: deepest, separators };
}

/** The deepest nesting of objects and arrays in a JSON text, up to `limit` (see jsonShape). */
export function jsonDepth(text: Uint8Array, limit = Number.POSITIVE_INFINITY): number {
  return jsonShape(text, { depth: limit }).depth;
}
