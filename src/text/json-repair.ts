/**
 * @module text/json-repair
 * Reads the almost-JSON that language models write, shared by tool-call arguments and the side
 * tasks' structured answers.
 *
 * {@link parseLooseJson} is strict `JSON.parse` first and the repair of text/json-repair-rewrite
 * second, so valid JSON is never rewritten. {@link findJson} finds the JSON inside a reply that
 * wraps it in prose or a ``` fence, and {@link balancedEnd} where a bracket closes.
 */

import { endsString, repairJson } from "./json-repair-rewrite.js";

const QUOTE = 0x22;
const APOSTROPHE = 0x27;
const BACKSLASH = 0x5c;

/** What {@link parseLooseJson} read from a text. */
export type LooseJsonResult =
  | { ok: true; value: unknown; /** Whether the repair was needed. */ repaired: boolean }
  | { ok: false; /** Whether the text ends early rather than being wrong. */ truncated: boolean; message: string };

/**
 * How deeply a text may nest its objects and arrays before {@link parseLooseJson} refuses it
 * unread: no tool's arguments or structured answer nests this deep, and parsing a text nested
 * a hundred thousand levels takes the engine's JSON parser most of a second.
 */
export const MAX_JSON_DEPTH = 512;

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
