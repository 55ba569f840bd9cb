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

/**
 * The deepest nesting of objects and arrays in a JSON text, up to `limit` (it stops counting
 * there): one pass over the bytes, skipping strings, without parsing. JSON.parse takes time that
 * grows faster than the size with the nesting (a 256 KiB array nested 128k deep: about 200 ms of
 * event loop), so a body is checked with this first and refused when nested deeper than any
 * legitimate message. Malformed JSON is not detected here: JSON.parse still rejects it.
 */
export function jsonDepth(text: Uint8Array, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length && deepest < limit; i++) {
    const byte = text[i]!;
    if (byte === QUOTE) i = endOfString(text, i);
    depth += NESTING[byte]!;
    deepest = Math.max(deepest, depth);
  }
  return deepest;
}
