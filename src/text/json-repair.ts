/**
 * @module text/json-repair
 * Reads the almost-JSON that language models write, shared by tool-call arguments and the side
 * tasks' structured answers.
 *
 * {@link repairJson} rewrites the slips a model makes when it means JSON (single quotes,
 * Python's `True`/`False`/`None`, bare keys, trailing commas, comments, raw newlines in strings)
 * into JSON without changing any string's contents. {@link findJson} finds the JSON inside a
 * reply that wraps it in prose or a ``` fence. {@link parseLooseJson} is strict `JSON.parse`
 * first and the repair second, so valid JSON is never rewritten.
 */

import { isDigitCode, isLetterCode, isWhitespaceCode } from "./char-codes.js";

/** What {@link repairJson} made of a text. */
export interface RepairedJson {
  /** The text rewritten as JSON, as far as the repair could; it may still fail to parse. */
  text: string;
  /** Whether the text ends early: inside a string, or with an object or array left open. */
  truncated: boolean;
}

/** What {@link parseLooseJson} read from a text. */
export type LooseJsonResult =
  | { ok: true; value: unknown; /** Whether the repair was needed. */ repaired: boolean }
  | { ok: false; /** Whether the text ends early rather than being wrong. */ truncated: boolean; message: string };

const HEX4 = /^[0-9A-Fa-f]{4}$/;
const HEX2 = /^[0-9A-Fa-f]{2}$/;
const SIMPLE_ESCAPES: ReadonlySet<string> = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);

/**
 * How deeply a text may nest its objects and arrays before {@link parseLooseJson} refuses it
 * unread: no tool's arguments or structured answer nests this deep, and parsing a text nested
 * a hundred thousand levels takes the engine's JSON parser most of a second.
 */
export const MAX_JSON_DEPTH = 512;

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
function endsString(text: string, from: number): boolean {
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

/**
 * Parses JSON strictly, and where that fails, parses its repair.
 *
 * Never throws: a text that still does not parse comes back as `ok: false`, with `truncated`
 * telling a text cut off before it ended from one that is wrong. A text whose brackets nest
 * deeper than {@link MAX_JSON_DEPTH} is refused before any parse, as `ok: false` and not
 * truncated, since it is wrong however it ends.
 */
export function parseLooseJson(text: string): LooseJsonResult {
  const nesting = readNesting(text);
  if (nesting === "too deep") return { ok: false, truncated: false, message: `it nests deeper than ${MAX_JSON_DEPTH} levels` };
  // Text that ends inside a string or an open bracket is never valid JSON: go straight to the repair.
  let strict: unknown;
  if (nesting === "closed") {
    try {
      return { ok: true, value: JSON.parse(text), repaired: false };
    } catch (error) {
      strict = error;
    }
  }
  const repaired = repairJson(text);
  // The repair closes nothing, so a repair that ends open cannot parse either.
  if (repaired.truncated) return { ok: false, truncated: true, message: "it ends before its JSON is complete" };
  try {
    return { ok: true, value: JSON.parse(repaired.text), repaired: true };
  } catch (error) {
    return { ok: false, truncated: false, message: ((strict ?? strictError(text) ?? error) as Error).message };
  }
}

/** The error strict `JSON.parse` raises on a text, for a message; undefined where it parses. */
function strictError(text: string): unknown {
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    return error;
  }
}

/**
 * Reads the brackets of a text as {@link balancedEnd} does (a closing bracket with none open
 * counting for nothing): `"too deep"` once they nest past {@link MAX_JSON_DEPTH}, reading no
 * further; `"open"` when the text ends inside a string or a bracket; `"closed"` otherwise.
 */
function readNesting(text: string): "too deep" | "open" | "closed" {
  let depth = 0;
  let quote = 0;
  const length = text.length;
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    if (quote !== 0) {
      if (code === BACKSLASH) index++;
      else if (code === quote && (quote === QUOTE || endsString(text, index + 1))) quote = 0;
      continue;
    }
    if (code === QUOTE) quote = QUOTE;
    else if (code === APOSTROPHE && depth > 0) quote = APOSTROPHE;
    else if (code === 0x7b || code === 0x5b) {
      if (++depth > MAX_JSON_DEPTH) return "too deep";
    } else if ((code === 0x7d || code === 0x5d) && depth > 0) depth--;
  }
  return depth > 0 || quote !== 0 ? "open" : "closed";
}

/**
 * Finds the JSON object or array inside a reply: the whole reply, a ``` fence, or the first
 * balanced object or array in prose.
 *
 * Returns the candidate text (not parsed), preferring the first candidate that parses after
 * repair; undefined when the reply holds no `{` or `[` at all. A fence or object cut off at the
 * end is returned to the end of the text, for the parse to call truncated. Tries at most sixteen
 * brackets in prose, and parses each candidate text once, so the time is linear in the reply.
 */
export function findJson(text: string): string | undefined {
  let first: string | undefined;
  const tried = new Set<string>();
  for (const candidate of jsonCandidates(text)) {
    first ??= candidate;
    if (tried.has(candidate)) continue;
    tried.add(candidate);
    const parsed = parseLooseJson(candidate);
    if (parsed.ok && typeof parsed.value === "object" && parsed.value !== null) return candidate;
  }
  return first;
}

/** The candidates of {@link findJson}, in order, made only as far as they are asked for. */
function* jsonCandidates(text: string): Generator<string> {
  const trimmed = text.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) yield trimmed;
  const fence = /```[^\n`]*\n?([\s\S]*?)(?:```|$)/g;
  for (const match of text.matchAll(fence)) {
    const body = (match[1] ?? "").trim();
    if (body.startsWith("{") || body.startsWith("[")) yield body;
  }
  let from = 0;
  for (let tries = 0; tries < 16; tries++) {
    const start = nextBracket(text, from);
    if (start < 0) break;
    yield text.slice(start, balancedEnd(text, start));
    from = start + 1;
  }
}

/** The index of the first `{` or `[` at or after `from`; -1 where there is none. */
function nextBracket(text: string, from: number): number {
  for (let index = from; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 0x7b || code === 0x5b) return index;
  }
  return -1;
}

/**
 * Returns the index just past the bracket that closes the one at `start`, reading quoted strings
 * (either quote) as opaque; the text's length when it never closes.
 */
export function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let quote = 0;
  const length = text.length;
  for (let index = start; index < length; index++) {
    const code = text.charCodeAt(index);
    if (quote !== 0) {
      if (code === BACKSLASH) index++;
      else if (code === quote && (quote === QUOTE || endsString(text, index + 1))) quote = 0;
      continue;
    }
    if (code === QUOTE) quote = QUOTE;
    else if (code === APOSTROPHE && depth > 0) quote = APOSTROPHE;
    else if (code === 0x7b || code === 0x5b) depth++;
    else if (code === 0x7d || code === 0x5d) {
      depth--;
      if (depth === 0) return index + 1;
    }
  }
  return length;
}
