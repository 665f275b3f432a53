/**
 * @module text/json-repair-rewrite
 * Rewrites the slips a model makes when it means JSON (single quotes, Python's
 * `True`/`False`/`None`, bare keys, trailing commas, comments, raw newlines in strings) into JSON,
 * without changing any string's contents. Reading the result is text/json-repair.
 */

import { isDigitCode, isLetterCode, isWhitespaceCode } from "./char-codes.js";

/** What {@link repairJson} made of a text. */
export interface RepairedJson {
  /** The text rewritten as JSON, as far as the repair could; it may still fail to parse. */
  text: string;
  /** Whether the text ends early: inside a string, or with an object or array left open. */
  truncated: boolean;
}

const HEX4 = /^[0-9A-Fa-f]{4}$/;
const HEX2 = /^[0-9A-Fa-f]{2}$/;
const SIMPLE_ESCAPES: ReadonlySet<string> = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);

const QUOTE = 0x22;
const APOSTROPHE = 0x27;
const BACKSLASH = 0x5c;
const SLASH = 0x2f;
const STAR = 0x2a;

/** `[A-Za-z_$]`: what a bare word starts with. */
function isIdentifierStart(code: number): boolean {
  return isLetterCode(code) || code === 0x5f || code === 0x24;
}

/** `[A-Za-z0-9_$]`: what a bare word goes on with. */
function isIdentifierPart(code: number): boolean {
  return isIdentifierStart(code) || isDigitCode(code);
}

/** `[0-9A-Za-z_.-]`: what a numeric-looking bare key goes on with. */
function isKeyPart(code: number): boolean {
  return isLetterCode(code) || isDigitCode(code) || code === 0x5f || code === 0x2e || code === 0x2d;
}

/** `[0-9eE+.-]`: what a number goes on with. */
function isNumberPart(code: number): boolean {
  return isDigitCode(code) || code === 0x65 || code === 0x45 || code === 0x2b || code === 0x2d || code === 0x2e;
}

/** Whether a comment (`//` or `/*`) starts at `index`. */
function isCommentStart(text: string, index: number): boolean {
  if (text.charCodeAt(index) !== SLASH) return false;
  const next = text.charCodeAt(index + 1);
  return next === SLASH || next === STAR;
}
/** Literal words a model writes for JSON's constants, mostly Python's. */
const WORDS: ReadonlyMap<string, string> = new Map([
  ["true", "true"],
  ["True", "true"],
  ["TRUE", "true"],
  ["false", "false"],
  ["False", "false"],
  ["FALSE", "false"],
  ["null", "null"],
  ["None", "null"],
  ["NULL", "null"],
  ["Null", "null"],
]);

/**
 * Rewrites almost-JSON into JSON, leaving every string's contents as the writer meant them.
 *
 * Repairs single-quoted strings, Python's `True`/`False`/`None`, bare and numeric object keys,
 * trailing commas, `//` and `/* *\/` comments, raw control characters and invalid escapes inside
 * strings (a lone backslash is kept as a backslash, `\'` is a quote, `\xHH` is that character),
 * quotes inside a string that do not end it, a leading `+` and a bare leading or trailing decimal
 * point. It does not close what was cut off; it reports it as `truncated`.
 */
export function repairJson(text: string): RepairedJson {
  let out = "";
  let index = 0;
  const length = text.length;
  /** Open containers: `{` or `[`. */
  const stack: string[] = [];
  /** Whether the innermost object expects a key next. */
  let expectKey = false;
  /** Whether a value (or key) may start here; a quote anywhere else is stray, not a string. */
  let expectValue = true;

  while (index < length) {
    const code = text.charCodeAt(index);
    if (isWhitespaceCode(code)) {
      let end = index + 1;
      while (end < length && isWhitespaceCode(text.charCodeAt(end))) end++;
      out += text.slice(index, end);
      index = end;
      continue;
    }
    if (isCommentStart(text, index)) {
      index = skipBlank(text, index);
      continue;
    }
    if ((code === QUOTE || code === APOSTROPHE) && !expectValue) {
      out += text[index];
      index++;
      continue;
    }
    if (code === QUOTE || code === APOSTROPHE) {
      expectValue = false;
      const read = readString(text, index, code);
      out += read.json;
      index = read.end;
      if (read.unterminated) return { text: out, truncated: true };
      continue;
    }
    if (code === 0x7b /* { */ || code === 0x5b /* [ */) {
      stack.push(code === 0x7b ? "{" : "[");
      expectKey = code === 0x7b;
      expectValue = true;
      out += text[index];
      index++;
      continue;
    }
    if (code === 0x7d /* } */ || code === 0x5d /* ] */) {
      stack.pop();
      expectKey = false;
      expectValue = false;
      out += text[index];
      index++;
      continue;
    }
    if (code === 0x3a /* : */) {
      expectKey = false;
      expectValue = true;
      out += ":";
      index++;
      continue;
    }
    if (code === 0x2c /* , */) {
      const next = skipBlank(text, index + 1);
      const following = text.charCodeAt(next);
      index++;
      // A comma before a closing bracket is a trailing comma; so is one at a container's start.
      if (following === 0x7d || following === 0x5d || following === 0x2c) continue;
      expectKey = stack[stack.length - 1] === "{";
      expectValue = true;
      out += ",";
      continue;
    }
    const wordStart = isIdentifierStart(code);
    if (wordStart || (expectKey && (isDigitCode(code) || code === 0x2d))) {
      let end = index + 1;
      const part = wordStart ? isIdentifierPart : isKeyPart;
      while (end < length && part(text.charCodeAt(end))) end++;
      const word = text.slice(index, end);
      expectValue = false;
      const after = skipBlank(text, end);
      if (text.charCodeAt(after) === 0x3a && (expectKey || stack.length === 0 || wordStart)) {
        out += JSON.stringify(word);
      } else {
        out += WORDS.get(word) ?? word;
      }
      index = end;
      continue;
    }
    if (isDigitCode(code) || code === 0x2b || code === 0x2d || code === 0x2e) {
      let end = index + 1;
      while (end < length && isNumberPart(text.charCodeAt(end))) end++;
      out += normaliseNumber(text.slice(index, end));
      expectValue = false;
      index = end;
      continue;
    }
    out += text[index];
    index++;
  }
  return { text: out, truncated: stack.length > 0 };
}

/** The index of the first character at or after `from` that is neither whitespace nor inside a comment. */
function skipBlank(text: string, from: number): number {
  const length = text.length;
  let position = from;
  for (;;) {
    while (position < length && isWhitespaceCode(text.charCodeAt(position))) position++;
    if (!isCommentStart(text, position)) return position;
    if (text.charCodeAt(position + 1) === SLASH) {
      const end = text.indexOf("\n", position);
      position = end < 0 ? length : end;
    } else {
      const end = text.indexOf("*/", position + 2);
      position = end < 0 ? length : end + 2;
    }
  }
}

function normaliseNumber(number: string): string {
  let sign = "";
  let body = number;
  if (body.startsWith("+")) body = body.slice(1);
  else if (body.startsWith("-")) {
    sign = "-";
    body = body.slice(1);
  }
  if (body.startsWith(".")) body = `0${body}`;
  body = body.replace(/\.(?=$|[eE])/, ".0");
  return sign + body;
}

/**
 * Reads one string starting at the quote `text[start]` and returns it as a JSON string.
 *
 * A quote ends the string only where JSON could go on after it (a comma, a colon, a closing
 * bracket or the end); elsewhere it is part of the text.
 */
function readString(text: string, start: number, quote: number): { json: string; end: number; unterminated: boolean } {
  let value = "";
  let index = start + 1;
  /** The start of the run of characters not yet copied into `value`. */
  let run = index;
  /** Whether that run holds a `"`, which is escaped as the run is copied. */
  let quoted = false;
  const length = text.length;
  const copyRun = (to: number): void => {
    const piece = text.slice(run, to);
    value += quoted ? piece.replaceAll('"', '\\"') : piece;
    quoted = false;
  };
  while (index < length) {
    const code = text.charCodeAt(index);
    if (code !== BACKSLASH && code !== QUOTE && code !== quote && code >= 0x20) {
      index++;
      continue;
    }
    if (code === quote && endsString(text, index + 1)) {
      copyRun(index);
      return { json: `"${value}"`, end: index + 1, unterminated: false };
    }
    if (code === QUOTE || code === APOSTROPHE) {
      // A quote that does not end the string is part of it: the run goes on.
      if (code === QUOTE) quoted = true;
      index++;
      continue;
    }
    copyRun(index);
    if (code === BACKSLASH) {
      const next = text[index + 1];
      if (next === undefined) {
        // A backslash is the last thing written: the text stops mid-escape.
        return { json: `"${value}`, end: length, unterminated: true };
      }
      if (next === "'") {
        value += "'";
        index += 2;
      } else if (next === "u" && HEX4.test(text.slice(index + 2, index + 6))) {
        value += text.slice(index, index + 6);
        index += 6;
      } else if (next === "x" && HEX2.test(text.slice(index + 2, index + 4))) {
        value += `\\u00${text.slice(index + 2, index + 4)}`;
        index += 4;
      } else if (SIMPLE_ESCAPES.has(next)) {
        value += `\\${next}`;
        index += 2;
      } else {
        // Not an escape JSON knows: the backslash was meant literally.
        value += "\\\\";
        index += 1;
      }
    } else {
      value += escapeControl(text[index] as string);
      index++;
    }
    run = index;
  }
  copyRun(index);
  return { json: `"${value}`, end: length, unterminated: true };
}

/** Whether a closing quote just before `from` can end a string: JSON goes on after it. */
export function endsString(text: string, from: number): boolean {
  let index = from;
  while (index < text.length && isWhitespaceCode(text.charCodeAt(index))) index++;
  if (index >= text.length) return true;
  const next = text.charCodeAt(index);
  return next === 0x2c || next === 0x3a || next === 0x7d || next === 0x5d || isCommentStart(text, index);
}

function escapeControl(character: string): string {
  switch (character) {
    case "\n":
      return "\\n";
    case "\r":
      return "\\r";
    case "\t":
      return "\\t";
    case "\b":
      return "\\b";
    case "\f":
      return "\\f";
    default:
      return `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`;
  }
}
