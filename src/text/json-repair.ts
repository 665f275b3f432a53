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

const IDENTIFIER_START = /[A-Za-z_$]/;
const IDENTIFIER_PART = /[A-Za-z0-9_$]/;
const NUMBER_PART = /[0-9eE+\-.]/;
const HEX4 = /^[0-9A-Fa-f]{4}$/;
const HEX2 = /^[0-9A-Fa-f]{2}$/;
const SIMPLE_ESCAPES: ReadonlySet<string> = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);

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

  const skipBlank = (from: number): number => {
    let position = from;
    for (;;) {
      while (position < length && /\s/.test(text[position] as string)) position++;
      if (text.startsWith("//", position)) {
        const end = text.indexOf("\n", position);
        position = end < 0 ? length : end;
        continue;
      }
      if (text.startsWith("/*", position)) {
        const end = text.indexOf("*/", position + 2);
        position = end < 0 ? length : end + 2;
        continue;
      }
      return position;
    }
  };

  while (index < length) {
    const character = text[index] as string;
    if (/\s/.test(character)) {
      out += character;
      index++;
      continue;
    }
    if (text.startsWith("//", index) || text.startsWith("/*", index)) {
      index = skipBlank(index);
      continue;
    }
    if ((character === '"' || character === "'") && !expectValue) {
      out += character;
      index++;
      continue;
    }
    if (character === '"' || character === "'") {
      expectValue = false;
      const read = readString(text, index, character);
      out += read.json;
      index = read.end;
      if (read.unterminated) return { text: out, truncated: true };
      continue;
    }
    if (character === "{" || character === "[") {
      stack.push(character);
      expectKey = character === "{";
      expectValue = true;
      out += character;
      index++;
      continue;
    }
    if (character === "}" || character === "]") {
      stack.pop();
      expectKey = false;
      expectValue = false;
      out += character;
      index++;
      continue;
    }
    if (character === ":") {
      expectKey = false;
      expectValue = true;
      out += character;
      index++;
      continue;
    }
    if (character === ",") {
      const next = skipBlank(index + 1);
      const following = text[next];
      index++;
      // A comma before a closing bracket is a trailing comma; so is one at a container's start.
      if (following === "}" || following === "]" || following === ",") continue;
      expectKey = stack[stack.length - 1] === "{";
      expectValue = true;
      out += ",";
      continue;
    }
    if (IDENTIFIER_START.test(character) || (expectKey && /[0-9\-]/.test(character))) {
      let end = index + 1;
      const part = IDENTIFIER_START.test(character) ? IDENTIFIER_PART : /[0-9A-Za-z_.\-]/;
      while (end < length && part.test(text[end] as string)) end++;
      const word = text.slice(index, end);
      expectValue = false;
      const after = skipBlank(end);
      if (text[after] === ":" && (expectKey || stack.length === 0 || IDENTIFIER_START.test(character))) {
        out += JSON.stringify(word);
      } else {
        out += WORDS.get(word) ?? word;
      }
      index = end;
      continue;
    }
    if (/[0-9+\-.]/.test(character)) {
      let end = index + 1;
      while (end < length && NUMBER_PART.test(text[end] as string)) end++;
      out += normaliseNumber(text.slice(index, end));
      expectValue = false;
      index = end;
      continue;
    }
    out += character;
    index++;
  }
  return { text: out, truncated: stack.length > 0 };
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
function readString(text: string, start: number, quote: string): { json: string; end: number; unterminated: boolean } {
  let value = "";
  let index = start + 1;
  const length = text.length;
  while (index < length) {
    const character = text[index] as string;
    if (character === "\\") {
      const next = text[index + 1];
      if (next === undefined) {
        // A backslash is the last thing written: the text stops mid-escape.
        return { json: `"${value}`, end: length, unterminated: true };
      }
      if (next === "'") {
        value += "'";
        index += 2;
        continue;
      }
      if (next === "u" && HEX4.test(text.slice(index + 2, index + 6))) {
        value += text.slice(index, index + 6);
        index += 6;
        continue;
      }
      if (next === "x" && HEX2.test(text.slice(index + 2, index + 4))) {
        value += `\\u00${text.slice(index + 2, index + 4)}`;
        index += 4;
        continue;
      }
      if (SIMPLE_ESCAPES.has(next) && next !== "u") {
        value += `\\${next}`;
        index += 2;
        continue;
      }
      // Not an escape JSON knows: the backslash was meant literally.
      value += "\\\\";
      index += 1;
      continue;
    }
    if (character === quote && endsString(text, index + 1)) {
      return { json: `"${value}"`, end: index + 1, unterminated: false };
    }
    if (character === '"') value += '\\"';
    else if (character.charCodeAt(0) < 0x20) value += escapeControl(character);
    else value += character;
    index++;
  }
  return { json: `"${value}`, end: length, unterminated: true };
}

/** Whether a closing quote just before `from` can end a string: JSON goes on after it. */
function endsString(text: string, from: number): boolean {
  let index = from;
  while (index < text.length && /\s/.test(text[index] as string)) index++;
  if (index >= text.length) return true;
  const next = text[index] as string;
  return next === "," || next === ":" || next === "}" || next === "]" || text.startsWith("//", index) || text.startsWith("/*", index);
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
 * telling a text cut off before it ended from one that is wrong.
 */
export function parseLooseJson(text: string): LooseJsonResult {
  try {
    return { ok: true, value: JSON.parse(text), repaired: false };
  } catch (error) {
    const repaired = repairJson(text);
    try {
      return { ok: true, value: JSON.parse(repaired.text), repaired: true };
    } catch {
      return { ok: false, truncated: repaired.truncated, message: (error as Error).message };
    }
  }
}

/**
 * Finds the JSON object or array inside a reply: the whole reply, a ``` fence, or the first
 * balanced object or array in prose.
 *
 * Returns the candidate text (not parsed), preferring the first candidate that parses after
 * repair; undefined when the reply holds no `{` or `[` at all. A fence or object cut off at the
 * end is returned to the end of the text, for the parse to call truncated.
 */
export function findJson(text: string): string | undefined {
  const candidates = jsonCandidates(text);
  for (const candidate of candidates) {
    const parsed = parseLooseJson(candidate);
    if (parsed.ok && typeof parsed.value === "object" && parsed.value !== null) return candidate;
  }
  return candidates[0];
}

function jsonCandidates(text: string): string[] {
  const candidates: string[] = [];
  const trimmed = text.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) candidates.push(trimmed);
  const fence = /```[^\n`]*\n?([\s\S]*?)(?:```|$)/g;
  for (const match of text.matchAll(fence)) {
    const body = (match[1] ?? "").trim();
    if (body.startsWith("{") || body.startsWith("[")) candidates.push(body);
  }
  let from = 0;
  let tries = 0;
  while (tries < 16) {
    const open = text.slice(from).search(/[{[]/);
    if (open < 0) break;
    const start = from + open;
    const end = balancedEnd(text, start);
    candidates.push(text.slice(start, end));
    from = start + 1;
    tries++;
  }
  return [...new Set(candidates)];
}

/**
 * Returns the index just past the bracket that closes the one at `start`, reading quoted strings
 * (either quote) as opaque; the text's length when it never closes.
 */
export function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let quote = "";
  for (let index = start; index < text.length; index++) {
    const character = text[index] as string;
    if (quote !== "") {
      if (character === "\\") index++;
      else if (character === quote && (quote === '"' || endsString(text, index + 1))) quote = "";
      continue;
    }
    if (character === '"') quote = '"';
    else if (character === "'" && depth > 0) quote = "'";
    else if (character === "{" || character === "[") depth++;
    else if (character === "}" || character === "]") {
      depth--;
      if (depth === 0) return index + 1;
    }
  }
  return text.length;
}
