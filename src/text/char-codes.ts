/**
 * @module text/char-codes
 * Character classes read off UTF-16 code units, for the scanners that walk untrusted text one
 * unit at a time without a regular expression per character.
 */

/** Whether a UTF-16 code unit is whitespace as `\s` reads it. */
export function isWhitespaceCode(code: number): boolean {
  return (
    (code >= 0x09 && code <= 0x0d) ||
    code === 0x20 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** Whether a code unit is an ASCII letter. */
export function isLetterCode(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/** Whether a code unit is an ASCII digit. */
export function isDigitCode(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}
