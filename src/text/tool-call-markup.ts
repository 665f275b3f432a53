/**
 * @module text/tool-call-markup
 * The readers behind `recoverToolCalls`: each family's tool-call markup (Hermes and Qwen
 * `<tool_call>`, Qwen3-Coder `<function=…>`, Mistral `[TOOL_CALLS]`, Llama's python tags, gpt-oss
 * harmony) and the bare or fenced JSON call, read out of a reply into calls and the stretches of
 * text they came from.
 *
 * The reading is linear in the reply's length, however densely it packs markers: where each
 * marker kind next occurs is remembered, so no search covers the same text twice, and a call is
 * read only up to the next marker of its own kind. Only where that reads nothing (a call whose
 * arguments quote its own marker) is the call read again to the end of the reply, and those
 * second readings together may cover at most {@link SECOND_READING_BUDGET} times the reply.
 */

import type { JsonSchema } from "../shapes/config.js";
import { balancedEnd, parseLooseJson } from "./json-repair.js";
import { isWhitespaceCode } from "./char-codes.js";
import { isPlainRecord } from "./guards.js";
import { ALL_FENCES } from "./thinking.js";
import { GEMMA_CALL, readBareGemmaCall, readGemmaCalls } from "./gemma-call-markup.js";

/** gpt-oss harmony's header of a call on the commentary channel, as a server passes it raw. */
const HARMONY_CALL = "<|channel|>commentary to=";
/**
 * The same call with its recipient in the role section of the header, which the format allows
 * ("The recipient might be defined in the role or channel section of the header", openai/openai-cookbook
 * articles/openai-harmony.md): `<|start|>assistant to=functions.name<|channel|>commentary json<|message|>{…}`.
 * Read only right after `assistant ` or at the very start of the reply (the prompt ends in
 * `<|start|>assistant`), so prose that mentions `to=functions.` is left alone.
 */
const HARMONY_ROLE_CALL = "to=functions.";
const HARMONY_START = "<|start|>assistant";
const CHANNEL = "<|channel|>";
const HARMONY_END = /^\s*(?:<\|call\|>|<\|end\|>|<\|return\|>)/;
const CONSTRAIN = "<|constrain|>";
const MESSAGE = "<|message|>";

/**
 * Closing tags after which a reply's calls are looked for (what precedes is a scratchpad): the
 * closes of {@link ALL_FENCES}, read from that one table. A fence with markers is a channel format
 * (gpt-oss harmony) whose calls stand between its passages, so its close does not cut the reply.
 */
export const SCRATCHPAD_CLOSES: readonly string[] = ALL_FENCES.filter((fence) => fence.markers === undefined).map((fence) => fence.close);
const MARKERS = ["<tool_call>", "[TOOL_CALLS]", "<|python_tag|>", "<|python_start|>", "<function=", HARMONY_CALL, HARMONY_ROLE_CALL, GEMMA_CALL];
const LLAMA_END = /^\s*(?:<\|python_end\|>|<\|eom_id\|>|<\|eot_id\|>|<\|eom\|>|<\|eot\|>)/;
/** Qwen3-Coder's opening tag; a name holds no `<`, so a search for its `>` stops at the next tag. */
const FUNCTION_HEADER = /^<function=([^>\n<]*)>/;
/** The longest `<function=name>` or harmony header read: names are short, and a longer run is prose. */
const MAX_HEADER = 400;

/** A call read out of markup: its name and its arguments as written (text or a value). */
export interface Found {
  name: string;
  args: unknown;
}

/** A stretch of the reply that held calls, to be cut out of it, and the calls it held. */
export interface Segment {
  start: number;
  end: number;
  calls: Found[];
}

/**
 * How many times its own length a reply may be read again, in all, for calls that read nothing up
 * to the next marker of their kind (their arguments may quote the marker).
 */
export const SECOND_READING_BUDGET = 2;

/** Where each marker next occurs in one text, searched again only once the reading passes it. */
class MarkerIndex {
  readonly #text: string;
  /** Per marker, the place it was last searched from and what that search found (-1: nowhere). */
  readonly #next = new Map<string, { from: number; at: number }>();

  constructor(text: string) {
    this.#text = text;
  }

  /** The first index at or after `from` where `marker` occurs; -1 where it does not. */
  at(marker: string, from: number): number {
    const cached = this.#next.get(marker);
    // What a search from an earlier place found holds for a later one, up to that find.
    if (cached !== undefined && from >= cached.from && (cached.at < 0 || cached.at >= from)) return cached.at;
    const at = this.#text.indexOf(marker, from);
    this.#next.set(marker, { from, at });
    return at;
  }
}

/** Finds every stretch of `body` that opens with a known marker and holds at least one readable call. */
export function findMarkedCalls(body: string, known: ReadonlySet<string>, schemas: ReadonlyMap<string, JsonSchema | undefined>): Segment[] {
  const segments: Segment[] = [];
  const index = new MarkerIndex(body);
  let budget = SECOND_READING_BUDGET * body.length;
  let position = 0;
  while (position < body.length) {
    let start = -1;
    let marker = "";
    for (const candidate of MARKERS) {
      const at = index.at(candidate, position);
      if (at >= 0 && (start < 0 || at < start)) {
        start = at;
        marker = candidate;
      }
    }
    if (start < 0) break;
    // Read the call up to the next marker of its kind; a slice shares the text, it copies nothing.
    const bound = index.at(marker, start + marker.length);
    let segment = readMarked(bound < 0 ? body : body.slice(0, bound), start, marker, known, schemas);
    if ((segment === undefined || segment.calls.length === 0) && bound >= 0 && budget >= body.length - start) {
      budget -= body.length - start;
      segment = readMarked(body, start, marker, known, schemas);
    }
    if (segment && segment.calls.length > 0) {
      segments.push(segment);
      position = segment.end;
    } else {
      position = start + marker.length;
    }
  }
  return segments;
}

function readMarked(
  body: string,
  start: number,
  marker: string,
  known: ReadonlySet<string>,
  schemas: ReadonlyMap<string, JsonSchema | undefined>,
): Segment | undefined {
  const inner = start + marker.length;
  switch (marker) {
    case "<tool_call>": {
      const close = body.indexOf("</tool_call>", inner);
      const end = close < 0 ? body.length : close + "</tool_call>".length;
      const block = body.slice(inner, close < 0 ? body.length : close).trim();
      const calls = block.startsWith("<function=") ? readFunctionMarkup(block, schemas) : readJsonCalls(block);
      return { start, end, calls };
    }
    case "<function=": {
      const name = FUNCTION_HEADER.exec(body.slice(start, start + MAX_HEADER))?.[1]?.trim();
      if (name === undefined || !known.has(name)) return undefined;
      const close = body.indexOf("</function>", inner);
      let end = close < 0 ? body.length : close + "</function>".length;
      const stray = /^\s*<\/tool_call>/.exec(body.slice(end));
      if (stray) end += stray[0].length;
      return { start, end, calls: readFunctionMarkup(body.slice(start, end), schemas) };
    }
    case "[TOOL_CALLS]":
      return readMistral(body, start, inner);
    case HARMONY_CALL:
      return readHarmony(body, start, inner, known);
    case HARMONY_ROLE_CALL:
      return readHarmonyRole(body, start, known);
    case GEMMA_CALL:
      return readGemmaCalls(body, start);
    case "<|python_tag|>":
    case "<|python_start|>": {
      const calls: Found[] = [];
      let position = inner;
      for (;;) {
        const open = /^[\s;]*\{/.exec(body.slice(position));
        if (!open) break;
        const objectStart = position + open[0].length - 1;
        const objectEnd = balancedEnd(body, objectStart);
        const call = asCall(parseLooseJson(body.slice(objectStart, objectEnd)));
        if (!call) break;
        calls.push(call);
        position = objectEnd;
      }
      const ending = LLAMA_END.exec(body.slice(position));
      if (ending) position += ending[0].length;
      return { start, end: position, calls };
    }
    default:
      return undefined;
  }
}

/** Reads Mistral's `[TOOL_CALLS]`: a JSON array, or `name[CALL_ID]id[ARGS]{…}` / `name{…}`. */
function readMistral(body: string, start: number, inner: number): Segment | undefined {
  const after = body.slice(inner);
  const leading = /^\s*/.exec(after)?.[0].length ?? 0;
  const first = inner + leading;
  if (body[first] === "[") {
    const end = balancedEnd(body, first);
    const parsed = parseLooseJson(body.slice(first, end));
    if (!parsed.ok || !Array.isArray(parsed.value)) return undefined;
    const calls = parsed.value.map((entry) => asCall({ ok: true, value: entry, repaired: false })).filter((call) => call !== undefined);
    return { start, end, calls };
  }
  const header = /^([A-Za-z0-9_.-]+)\s*(?:\[CALL_ID\]\s*[A-Za-z0-9_-]*\s*)?(?:\[ARGS\])?\s*/.exec(body.slice(first));
  if (!header) return undefined;
  const argumentsStart = first + header[0].length;
  if (body[argumentsStart] !== "{") return undefined;
  const end = balancedEnd(body, argumentsStart);
  return { start, end, calls: [{ name: header[1] as string, args: body.slice(argumentsStart, end) }] };
}

/**
 * Reads a harmony call: `<|channel|>commentary to=functions.name <|constrain|>json<|message|>{…}<|call|>`,
 * also with the `json` glued to the name.
 */
function readHarmony(body: string, start: number, inner: number, known: ReadonlySet<string>, inRole = false): Segment | undefined {
  const header = harmonyHeader(body, inner, inRole);
  if (!header) return undefined;
  let name = header.name;
  if (!known.has(name) && name.endsWith("json") && known.has(name.slice(0, -4))) name = name.slice(0, -4);
  const argumentsStart = header.end;
  if (body[argumentsStart] !== "{") return undefined;
  let end = balancedEnd(body, argumentsStart);
  const args = body.slice(argumentsStart, end);
  const ending = HARMONY_END.exec(body.slice(end, end + MAX_HEADER));
  if (ending) end += ending[0].length;
  const from = body.startsWith(HARMONY_START, start - HARMONY_START.length) ? start - HARMONY_START.length : start;
  return { start: from, end, calls: [{ name, args }] };
}

/** Whether only white space comes before `at`; stops at the first other character, so a scan costs what it skips. */
function opensReply(body: string, at: number): boolean {
  for (let index = at - 1; index >= 0; index--) if (!isWhitespaceCode(body.charCodeAt(index))) return false;
  return true;
}

/**
 * Reads a harmony call whose recipient is in the role section: `to=functions.name` right after
 * `<|start|>assistant ` (the segment then starts at `<|start|>`), or opening the reply.
 */
function readHarmonyRole(body: string, start: number, known: ReadonlySet<string>): Segment | undefined {
  const before = body.slice(Math.max(0, start - HARMONY_START.length - 1), start);
  let from = start;
  if (before.endsWith(`${HARMONY_START} `)) from = start - HARMONY_START.length - 1;
  else if (!opensReply(body, start) && !/assistant\s$/.test(before)) return undefined;
  const segment = readHarmony(body, start, start + "to=".length, known, true);
  return segment ? { ...segment, start: Math.min(segment.start, from) } : undefined;
}

/**
 * Reads the rest of a harmony call's header after `to=`: `functions.` (optional), the name (up to
 * whitespace or a tag), anything up to the next tag, with the recipient in the role section
 * `<|channel|>` and the channel's words, an optional `<|constrain|>json`, then
 * `<|message|>` and any whitespace; all within {@link MAX_HEADER} characters. Returns the name and
 * where the arguments start.
 */
function harmonyHeader(body: string, inner: number, inRole = false): { name: string; end: number } | undefined {
  const limit = Math.min(body.length, inner + MAX_HEADER);
  const nameEnd = (from: number): number => {
    let end = from;
    while (end < limit && body[end] !== "<" && !isWhitespaceCode(body.charCodeAt(end))) end++;
    return end;
  };
  let nameStart = body.startsWith("functions.", inner) ? inner + "functions.".length : inner;
  let at = nameEnd(nameStart);
  // `functions.` with no name after it is itself the name.
  if (at === nameStart && nameStart !== inner) at = nameEnd((nameStart = inner));
  if (at === nameStart) return undefined;
  const name = body.slice(nameStart, at);
  while (at < limit && body[at] !== "<") at++;
  if (at >= limit) return undefined;
  // With the recipient in the role section, the channel follows it: `<|channel|>commentary json`.
  if (inRole) {
    if (!body.startsWith(CHANNEL, at)) return undefined;
    at += CHANNEL.length;
    while (at < limit && body[at] !== "<") at++;
    if (at >= limit) return undefined;
  }
  if (body.startsWith(CONSTRAIN, at)) {
    at += CONSTRAIN.length;
    while (at < limit && isWhitespaceCode(body.charCodeAt(at))) at++;
    while (at < limit && /\w/.test(body[at] as string)) at++;
    while (at < limit && isWhitespaceCode(body.charCodeAt(at))) at++;
  }
  if (!body.startsWith(MESSAGE, at) || at + MESSAGE.length > limit) return undefined;
  at += MESSAGE.length;
  while (at < limit && isWhitespaceCode(body.charCodeAt(at))) at++;
  return { name, end: at };
}

/** Reads one or more JSON calls from a `<tool_call>` block: objects, one after another, or an array. */
function readJsonCalls(block: string): Found[] {
  const calls: Found[] = [];
  let position = 0;
  while (position < block.length) {
    const open = block.slice(position).search(/[{[]/);
    if (open < 0) break;
    const start = position + open;
    const end = balancedEnd(block, start);
    const parsed = parseLooseJson(block.slice(start, end));
    if (parsed.ok && Array.isArray(parsed.value)) {
      for (const entry of parsed.value) {
        const call = asCall({ ok: true, value: entry, repaired: false });
        if (call) calls.push(call);
      }
    } else {
      const call = asCall(parsed);
      if (call) calls.push(call);
    }
    position = end;
  }
  return calls;
}

/** Reads a JSON value as a call: `{name, arguments|parameters}` or OpenAI's `{function: {…}}`. */
function asCall(parsed: ReturnType<typeof parseLooseJson>, requireArguments = false): Found | undefined {
  if (!parsed.ok || !isPlainRecord(parsed.value)) return undefined;
  let value = parsed.value;
  if (isPlainRecord(value.function) && typeof value.function.name === "string") value = value.function;
  const name = value.name;
  if (typeof name !== "string" || name.trim() === "") return undefined;
  const hasArguments = "arguments" in value || "parameters" in value;
  if (requireArguments && !hasArguments) return undefined;
  return { name: name.trim(), args: "arguments" in value ? value.arguments : value.parameters };
}

/** Reads Qwen3-Coder's `<function=name><parameter=key>value</parameter></function>` markup. */
function readFunctionMarkup(block: string, schemas: ReadonlyMap<string, JsonSchema | undefined>): Found[] {
  const calls: Found[] = [];
  const functionPattern = /<function=([^>\n<]*)>([\s\S]*?)(?:<\/function>|(?=<function=)|$)/g;
  for (const match of block.matchAll(functionPattern)) {
    const name = (match[1] ?? "").trim();
    if (name === "") continue;
    const properties = propertiesOf(schemas.get(name));
    const args: Record<string, unknown> = {};
    const parameterPattern = /<parameter=([^>\n<]*)>([\s\S]*?)(?:<\/parameter>|(?=<parameter=)|(?=<\/function>)|$)/g;
    for (const parameter of (match[2] ?? "").matchAll(parameterPattern)) {
      const key = (parameter[1] ?? "").trim();
      if (key === "") continue;
      let value = parameter[2] ?? "";
      if (value.startsWith("\n")) value = value.slice(1);
      if (value.endsWith("\n")) value = value.slice(0, -1);
      args[key] = typedValue(value, properties?.[key]);
    }
    calls.push({ name, args });
  }
  return calls;
}

function propertiesOf(schema: JsonSchema | undefined): Record<string, unknown> | undefined {
  if (!isPlainRecord(schema)) return undefined;
  return isPlainRecord(schema.properties) ? schema.properties : undefined;
}

/** Reads a Qwen3-Coder parameter value as the type its schema declares; a string otherwise. */
function typedValue(value: string, schema: unknown): unknown {
  const declared = isPlainRecord(schema) ? schema.type : undefined;
  const types = (Array.isArray(declared) ? declared : [declared]).filter((type): type is string => typeof type === "string");
  if (types.length === 0 || types.includes("string")) return value;
  const trimmed = value.trim();
  if (trimmed === "null" && types.includes("null")) return null;
  if (types.includes("integer") || types.includes("number")) {
    const number = Number(trimmed);
    if (trimmed !== "" && Number.isFinite(number)) return number;
  }
  if (types.includes("boolean")) {
    if (/^true$/i.test(trimmed)) return true;
    if (/^false$/i.test(trimmed)) return false;
  }
  if (types.includes("object") || types.includes("array")) {
    const parsed = parseLooseJson(trimmed);
    if (parsed.ok && typeof parsed.value === "object" && parsed.value !== null) return parsed.value;
  }
  return value;
}

/** A reply that is only a JSON call naming a known tool, or holds exactly one fenced one. */
export function findBareCall(body: string, known: ReadonlySet<string>): Segment | undefined {
  const trimmed = body.trim();
  if (trimmed.startsWith("call:")) return readBareGemmaCall(body, known);
  if (trimmed.startsWith("{")) {
    const start = body.indexOf("{");
    const end = balancedEnd(body, start);
    if (body.slice(end).trim() === "") {
      const call = asCall(parseLooseJson(body.slice(start, end)), true);
      if (call && known.has(call.name)) return { start: 0, end: body.length, calls: [call] };
    }
    return undefined;
  }
  const fences: Segment[] = [];
  for (const match of body.matchAll(/```[^\n`]*\n([\s\S]*?)```/g)) {
    const inside = (match[1] ?? "").trim();
    // A call names itself; a fence without the word (or an escape that could spell it) holds none.
    if (!inside.startsWith("{") || !(inside.includes("name") || inside.includes("\\u"))) continue;
    const call = asCall(parseLooseJson(inside), true);
    if (call && known.has(call.name)) fences.push({ start: match.index, end: match.index + match[0].length, calls: [call] });
  }
  return fences.length === 1 ? fences[0] : undefined;
}
