/**
 * Bodies that show nothing: each White_Space character, each Default_Ignorable_Code_Point class
 * member a phone can send (format characters, fillers, selectors, tags), and mixtures.
 */
export const INVISIBLE_BODIES: readonly string[] = [
  '\u0085', '\u00a0', '\u1680', '\u2000\u200a', '\u2028\u2029', '\u202f\u205f\u3000', '\t\n\v\f\r',
  '\u00ad', '\u034f', '\u061c', '\u115f', '\u1160', '\u17b4\u17b5', '\u180e', '\u200b', '\u200c\u200d', '\u200e\u200f',
  '\u202a\u202e', '\u2060\u2064', '\u2066\u2069', '\u3164', '\ufe0f', '\ufeff', '\uffa0', '\u{1bca0}', '\u{1d173}', '\u{e0001}\u{e0041}',
  '\u{e0100}', '\u2800', '\u0001\u007f\u009f', '\u3164 \u200b\u0085\u2800',
];

/** A body's code points, for test names (`U+3164 U+200B`). */
export const codePoints = (text: string): string => [...text].map((c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`).join(' ');
