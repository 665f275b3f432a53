/**
 * @module text/gemma-call-markup
 * Reads Gemma 4's own tool-call markup, as a server without its tool-call parser passes it
 * through: `<|tool_call>call:NAME{key:<|"|>text<|"|>,count:3}<tool_call|>`.
 *
 * The shape is the one its chat template writes for a call in the history (llama.cpp ships the
 * template as `models/templates/google-gemma-4-31B-it-interleaved.jinja`, macro
 * `format_argument` with bare keys): strings between `<|"|>` quotes, `true`/`false`, numbers,
 * `{key:value,…}` objects and `[value,…]` lists, keys bare or quoted the same way.
 */

/** A call read out of the markup, and the stretch of the reply it came from. */
export interface GemmaSegment {
  start: number;
  end: number;
  calls: { name: string; args: Record<string, unknown> }[];
}

/** The token that opens a Gemma 4 call. */
export const GEMMA_CALL = "<|tool_call>";
const GEMMA_CALL_END = "<tool_call|>";
const QUOTE = '<|"|>';
const CALL_PREFIX = "call:";
/** Nesting deeper than this is not read: the call stays in the text. */
const MAX_DEPTH = 512;
/** A name longer than this is prose, not a call. */
const MAX_NAME = 200;

/** Where a value ended, or undefined where the text is not the markup. */
type Read = { value: unknown; end: number } | undefined;

/**
 * Reads the call that opens at `start` (at {@link GEMMA_CALL}): its name and its arguments as an
 * object, and the stretch up to and including `<tool_call|>` (or the end of the arguments where
 * the closing token is missing). Returns a segment with no calls where the markup cannot be read.
 */
export function readGemmaCalls(body: string, start: number): GemmaSegment {
  return readCallAt(body, start, start + GEMMA_CALL.length);
}

/**
 * Reads a Gemma 4 call written without its opening token, as the model sometimes does straight
 * after closing its thought channel (`<channel|>call:bash{command:<|"|>ls<|"|>}`,
 * vllm-project/vllm#54256): only where the reply is nothing but such a call, to a tool the
 * request offered.
 */
export function readBareGemmaCall(body: string, known: ReadonlySet<string>): GemmaSegment | undefined {
  const start = body.length - body.trimStart().length;
  if (!body.startsWith(CALL_PREFIX, start)) return undefined;
  const segment = readCallAt(body, start, start);
  const call = segment.calls[0];
  if (call === undefined || !known.has(call.name) || body.slice(segment.end).trim() !== "") return undefined;
  return { start: 0, end: body.length, calls: segment.calls };
}

function readCallAt(body: string, start: number, from: number): GemmaSegment {
  const empty: GemmaSegment = { start, end: from === start ? start + CALL_PREFIX.length : from, calls: [] };
  let at = skipSpace(body, from);
  if (!body.startsWith(CALL_PREFIX, at)) return empty;
  at += CALL_PREFIX.length;
  const brace = body.indexOf("{", at);
  if (brace < 0 || brace - at > MAX_NAME) return empty;
  const name = body.slice(at, brace).trim();
  if (name === "" || /[\s<>{}]/.test(name)) return empty;
  const read = readValue(body, brace, 0);
  if (read === undefined || !isObject(read.value)) return empty;
  let end = skipSpace(body, read.end);
  if (body.startsWith(GEMMA_CALL_END, end)) end += GEMMA_CALL_END.length;
  else end = read.end;
  return { start, end, calls: [{ name, args: read.value }] };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && /\s/.test(text[at] as string)) at++;
  return at;
}

function readValue(text: string, at: number, depth: number): Read {
  if (depth > MAX_DEPTH) return undefined;
  at = skipSpace(text, at);
  if (text.startsWith(QUOTE, at)) {
    const close = text.indexOf(QUOTE, at + QUOTE.length);
    if (close < 0) return undefined;
    return { value: text.slice(at + QUOTE.length, close), end: close + QUOTE.length };
  }
  const char = text[at];
  if (char === "{") return readObject(text, at, depth);
  if (char === "[") return readList(text, at, depth);
  // A bare word or number, up to the next delimiter.
  let end = at;
  while (end < text.length && !",}]:".includes(text[end] as string) && !text.startsWith("<|", end)) end++;
  const word = text.slice(at, end).trim();
  if (word === "") return undefined;
  return { value: bareValue(word), end };
}

function bareValue(word: string): unknown {
  if (word === "true" || word === "True") return true;
  if (word === "false" || word === "False") return false;
  if (word === "null" || word === "None") return null;
  const number = Number(word);
  return /^-?\d/.test(word) && Number.isFinite(number) ? number : word;
}

function readObject(text: string, at: number, depth: number): Read {
  const value: Record<string, unknown> = {};
  at = skipSpace(text, at + 1);
  if (text[at] === "}") return { value, end: at + 1 };
  for (;;) {
    const key = readKey(text, at);
    if (key === undefined) return undefined;
    at = skipSpace(text, key.end);
    if (text[at] !== ":") return undefined;
    const item = readValue(text, at + 1, depth + 1);
    if (item === undefined) return undefined;
    Object.defineProperty(value, key.value, { value: item.value, enumerable: true, writable: true, configurable: true });
    at = skipSpace(text, item.end);
    if (text[at] === ",") {
      at = skipSpace(text, at + 1);
      continue;
    }
    if (text[at] === "}") return { value, end: at + 1 };
    return undefined;
  }
}

function readKey(text: string, at: number): { value: string; end: number } | undefined {
  if (text.startsWith(QUOTE, at)) {
    const close = text.indexOf(QUOTE, at + QUOTE.length);
    if (close < 0) return undefined;
    return { value: text.slice(at + QUOTE.length, close), end: close + QUOTE.length };
  }
  let end = at;
  while (end < text.length && /[\w.$-]/.test(text[end] as string)) end++;
  if (end === at) return undefined;
  return { value: text.slice(at, end), end };
}

function readList(text: string, at: number, depth: number): Read {
  const value: unknown[] = [];
  at = skipSpace(text, at + 1);
  if (text[at] === "]") return { value, end: at + 1 };
  for (;;) {
    const item = readValue(text, at, depth + 1);
    if (item === undefined) return undefined;
    value.push(item.value);
    at = skipSpace(text, item.end);
    if (text[at] === ",") {
      at += 1;
      continue;
    }
    if (text[at] === "]") return { value, end: at + 1 };
    return undefined;
  }
}
