/**
 * @module tool-calls
 * Reads what a model meant by a tool call it did not write cleanly, and names the shapes a call
 * is handed round in.
 *
 * {@link parseToolArguments} turns a call's argument text into an object, repairing the
 * almost-JSON local models write and telling a call cut off at the token ceiling from one that
 * is simply wrong ({@link ToolArgumentsError}). {@link recoverToolCalls} finds calls a model wrote
 * into its reply as text, in the markup of the common open-weight families, for a server whose
 * tool-call parser did not recognise them.
 */

import type { JsonSchema, ToolCall, ToolDefinition } from "./config.js";
import { balancedEnd, parseLooseJson } from "./internal/json-repair.js";

/**
 * A call as a tool's dispatcher is handed it.
 *
 * `args` is the repaired arguments object (empty where they could not be read); `raw` is the
 * argument text exactly as the model wrote it, for a dispatcher that wants to do its own reading.
 */
export interface ToolCallRequest {
  /** The call's id, distinct within one step; a server may reuse it in a later step. */
  id: string;
  /** The tool's name as the model wrote it. */
  name: string;
  /** The arguments, repaired into an object; `{}` where they could not be read. */
  args: Record<string, unknown>;
  /** The model's own argument text, unrepaired. */
  raw: string;
}

/**
 * What one call came to: the text the model reads back for it, and whether the tool succeeded.
 */
export interface ToolCallResult {
  /** The id of the call this answers. */
  id: string;
  /** The tool's name. */
  name: string;
  /** Whether the tool ran and succeeded; false for an error, a refusal or unreadable arguments. */
  ok: boolean;
  /** The whole text the model is given as the tool's answer. */
  content: string;
}

/**
 * One entry of a run's list of tool calls: the request and its result together.
 *
 * A host reads these to draw each call with its outcome; `id` tells two calls to one tool apart.
 */
export interface ToolCallOutcome {
  /** The call's id. */
  id: string;
  /** The tool's name. */
  name: string;
  /** The repaired arguments; `{}` where they could not be read. */
  args: Record<string, unknown>;
  /** Whether the tool ran and succeeded. */
  ok: boolean;
  /** The text the model was given as the answer. */
  content: string;
  /** How long the tool took, in milliseconds, where it ran. */
  durationMs?: number;
}

/** Why a call's arguments could not be read: cut off before the end, or not an object. */
export type ToolArgumentsErrorKind = "truncated" | "malformed";

/**
 * Thrown by {@link parseToolArguments} when a call's arguments are not an object even after
 * repair.
 *
 * `kind` is `"truncated"` when the text was cut off (the turn stopped at its token ceiling, or the
 * text ends inside a string or an open object) and `"malformed"` otherwise. The message is written
 * for the model to read as the call's result. `raw` is the text as written.
 */
export class ToolArgumentsError extends Error {
  override readonly name = "ToolArgumentsError";
  /** Whether the arguments were cut off or are simply not an object. */
  readonly kind: ToolArgumentsErrorKind;
  /** The argument text exactly as the model wrote it. */
  readonly raw: string;
  /** The tool the call was for, where the caller said. */
  readonly toolName: string | undefined;

  /** Makes the error; `message` defaults to one written for the model. */
  constructor(
    kind: ToolArgumentsErrorKind,
    raw: string,
    options: { toolName?: string; message?: string; detail?: string; ceiling?: boolean; cause?: unknown } = {},
  ) {
    super(options.message ?? argumentsMessage(kind, options.toolName, options.detail, options.ceiling ?? false), {
      cause: options.cause,
    });
    this.kind = kind;
    this.raw = raw;
    this.toolName = options.toolName;
  }

  /** Whether `value` is a ToolArgumentsError, also one from another copy of this package. */
  static is(value: unknown): value is ToolArgumentsError {
    return value instanceof ToolArgumentsError || (value instanceof Error && value.name === "ToolArgumentsError" && "kind" in value);
  }
}

function argumentsMessage(kind: ToolArgumentsErrorKind, toolName: string | undefined, detail: string | undefined, ceiling: boolean): string {
  const call = toolName ? `this call to ${toolName}` : "this tool call";
  if (kind === "truncated") {
    const why = ceiling ? " because the reply reached its length limit" : "";
    return `The arguments of ${call} were cut off before they were complete${why}, so the call was not run. Call it again with shorter arguments, or split the work into smaller calls.`;
  }
  return `The arguments of ${call} are not a JSON object${detail ? ` (${detail})` : ""}, so the call was not run. Call it again with the arguments written as one JSON object.`;
}

/** Options of {@link parseToolArguments}. */
export interface ParseToolArgumentsOptions {
  /**
   * The turn stopped at its token ceiling (finish reason `"length"`), so arguments that do not
   * parse were cut off.
   * @default false
   */
  truncated?: boolean;
  /** The tool the call was for, named in the error's message. */
  toolName?: string;
}

const FENCED = /^```[^\n`]*\n?([\s\S]*?)\n?(?:```\s*)?$/;
/** How many layers of JSON-inside-a-string are opened. */
const MAX_ENCODINGS = 3;

/**
 * Reads a tool call's argument text into an object, repairing what a model nearly got right.
 *
 * Empty or blank text, and JSON `null`, read as `{}`. JSON held in a string is opened (up to three
 * layers). Almost-JSON is repaired without changing any string's contents: single quotes,
 * Python's `True`/`False`/`None`, bare keys, trailing commas, comments, raw newlines inside
 * strings; a ``` fence around the arguments is taken off. Anything else that is not an object,
 * a top-level array or number included, is malformed.
 *
 * @param text - The argument text as the model wrote it.
 * @param options - `truncated` when the turn stopped at its ceiling; `toolName` for the message.
 * @returns The arguments object.
 * @throws ToolArgumentsError with kind `"truncated"` when the text was cut off (the ceiling was
 * reached, or it ends inside a string or an open object) and `"malformed"` otherwise.
 * @example
 * ```ts
 * parseToolArguments("{'path': 'a.txt', 'force': True,}"); // { path: "a.txt", force: true }
 * ```
 */
export function parseToolArguments(text: string, options: ParseToolArgumentsOptions = {}): Record<string, unknown> {
  const fail = (kind: ToolArgumentsErrorKind, raw: string, detail?: string): ToolArgumentsError =>
    new ToolArgumentsError(kind, raw, {
      ...(options.toolName !== undefined ? { toolName: options.toolName } : {}),
      ...(detail !== undefined ? { detail } : {}),
      ceiling: options.truncated === true,
    });
  const input: unknown = text;
  if (typeof input !== "string") {
    // A server that hands over parsed arguments, or none at all.
    if (input === undefined || input === null) return {};
    if (isPlainObject(input)) return { ...input };
    throw fail("malformed", String(input), `a ${typeof input}, not text`);
  }
  let current: unknown = text;
  for (let layer = 0; layer <= MAX_ENCODINGS; layer++) {
    if (typeof current !== "string") break;
    let source = current.trim();
    if (source === "") return {};
    const fenced = FENCED.exec(source);
    if (fenced && source.startsWith("```")) source = (fenced[1] ?? "").trim();
    if (source === "") return {};
    const parsed = parseLooseJson(source);
    if (!parsed.ok) {
      const truncated = options.truncated === true || parsed.truncated;
      throw fail(truncated ? "truncated" : "malformed", text, truncated ? undefined : `it does not parse: ${parsed.message}`);
    }
    current = parsed.value;
    if (typeof current === "string" && !/^\s*(?:```|[{["'])/.test(current) && current.trim() !== "") {
      throw fail("malformed", text, "a string, not an object");
    }
  }
  if (current === null) return {};
  if (isPlainObject(current)) return current;
  throw fail("malformed", text, describe(current));
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "a JSON array, not an object";
  if (typeof value === "string") return "a string, not an object";
  return `a ${typeof value}, not an object`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Options of {@link recoverToolCalls}. */
export interface RecoverToolCallsOptions {
  /**
   * The tools as the request declared them, used to read Qwen3-Coder's parameter values as their
   * declared types; without a declared type a value stays a string.
   */
  tools?: readonly ToolDefinition[];
}

/** What {@link recoverToolCalls} found. */
export interface RecoveredToolCalls {
  /** The calls found, in the order written, with ids `call_recovered_0` onward. */
  calls: ToolCall[];
  /** The reply with the calls taken out; unchanged when none were found. */
  text: string;
}

/** gpt-oss harmony's header of a call on the commentary channel, as a server passes it raw. */
const HARMONY_CALL = "<|channel|>commentary to=";
const HARMONY_START = "<|start|>assistant";
const HARMONY_END = /^\s*(?:<\|call\|>|<\|end\|>|<\|return\|>)/;

/** Closing tags after which a reply's calls are looked for (what precedes is a scratchpad). */
const SCRATCHPAD_CLOSES = ["</think>", "◁/think▷", "</thinking>", "</reasoning>"];
const MARKERS = ["<tool_call>", "[TOOL_CALLS]", "<|python_tag|>", "<|python_start|>", "<function=", HARMONY_CALL];
const LLAMA_END = /^\s*(?:<\|python_end\|>|<\|eom_id\|>|<\|eot_id\|>|<\|eom\|>|<\|eot\|>)/;

interface Found {
  name: string;
  args: unknown;
}

interface Segment {
  start: number;
  end: number;
  calls: Found[];
}

/**
 * Finds tool calls a model wrote into its reply as text and takes them out of it.
 *
 * Looks only after the last closing scratchpad tag (`</think>` and the other fences' closes) for
 * `<tool_call>` blocks holding JSON (Hermes, Qwen) or Qwen3-Coder's
 * `<function=name><parameter=key>value</parameter></function>` markup (also without the wrapper,
 * for a tool in `toolNames`), Mistral's `[TOOL_CALLS]` in both spellings (a JSON array, and
 * `name[ARGS]{…}` with or without `[CALL_ID]`), and Llama 3's `<|python_tag|>` (Llama 4's
 * `<|python_start|>`) followed by JSON calls, and gpt-oss harmony's commentary-channel call
 * (`<|channel|>commentary to=functions.name … <|message|>{…}`). A tagged call is recovered whatever tool it names,
 * so the loop can answer it. Failing those, a reply that is nothing but one JSON call
 * (`{"name", "arguments"}` or `"parameters"`), or that holds exactly one ``` fenced call, is
 * recovered only when it names a tool in `toolNames`. Arguments are stored as JSON text, repaired
 * where they could be; a call whose markup cannot be read is left in the text.
 *
 * @param text - The reply's content.
 * @param toolNames - The tools the request offered.
 * @param options - `tools` to read Qwen3-Coder parameter values as their declared types.
 * @example
 * ```ts
 * recoverToolCalls('Checking.\n<tool_call>\n{"name": "read", "arguments": {"path": "a"}}\n</tool_call>', ["read"]);
 * // { calls: [{ id: "call_recovered_0", type: "function", function: { name: "read", arguments: '{"path":"a"}' } }], text: "Checking." }
 * ```
 */
export function recoverToolCalls(
  text: string,
  toolNames: readonly string[],
  options: RecoverToolCallsOptions = {},
): RecoveredToolCalls {
  if (typeof text !== "string" || text === "") return { calls: [], text: typeof text === "string" ? text : "" };
  const known = new Set(toolNames);
  const schemas = new Map<string, JsonSchema | undefined>();
  for (const tool of options.tools ?? []) schemas.set(tool.function.name, tool.function.parameters);

  let cut = 0;
  for (const close of SCRATCHPAD_CLOSES) {
    const at = text.lastIndexOf(close);
    if (at >= 0) cut = Math.max(cut, at + close.length);
  }
  const head = text.slice(0, cut);
  const body = text.slice(cut);

  const segments = findMarkedCalls(body, known, schemas);
  if (segments.length === 0) {
    const bare = findBareCall(body, known);
    if (bare) segments.push(bare);
  }
  const found = segments.flatMap((segment) => segment.calls);
  if (found.length === 0) return { calls: [], text };

  let rest = "";
  let last = 0;
  for (const segment of segments) {
    rest += body.slice(last, segment.start);
    last = segment.end;
  }
  rest += body.slice(last);
  const calls: ToolCall[] = found.map((call, index) => ({
    id: `call_recovered_${index}`,
    type: "function",
    function: { name: call.name, arguments: argumentsText(call.args) },
  }));
  return { calls, text: (head + rest).replace(/\n{3,}/g, "\n\n").trim() };
}

function findMarkedCalls(body: string, known: ReadonlySet<string>, schemas: ReadonlyMap<string, JsonSchema | undefined>): Segment[] {
  const segments: Segment[] = [];
  let position = 0;
  while (position < body.length) {
    let start = -1;
    let marker = "";
    for (const candidate of MARKERS) {
      const at = body.indexOf(candidate, position);
      if (at >= 0 && (start < 0 || at < start)) {
        start = at;
        marker = candidate;
      }
    }
    if (start < 0) break;
    const segment = readMarked(body, start, marker, known, schemas);
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
      const name = /^<function=([^>\n]*)>/.exec(body.slice(start))?.[1]?.trim();
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
  const header = /^([A-Za-z0-9_.\-]+)\s*(?:\[CALL_ID\]\s*[A-Za-z0-9_\-]*\s*)?(?:\[ARGS\])?\s*/.exec(body.slice(first));
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
function readHarmony(body: string, start: number, inner: number, known: ReadonlySet<string>): Segment | undefined {
  const header = /^(?:functions\.)?([^\s<]+)[^<]*?(?:<\|constrain\|>\s*\w*\s*)?<\|message\|>\s*/.exec(body.slice(inner, inner + 400));
  if (!header) return undefined;
  let name = header[1] as string;
  if (!known.has(name) && name.endsWith("json") && known.has(name.slice(0, -4))) name = name.slice(0, -4);
  const argumentsStart = inner + header[0].length;
  if (body[argumentsStart] !== "{") return undefined;
  let end = balancedEnd(body, argumentsStart);
  const args = body.slice(argumentsStart, end);
  const ending = HARMONY_END.exec(body.slice(end));
  if (ending) end += ending[0].length;
  const from = body.slice(0, start).endsWith(HARMONY_START) ? start - HARMONY_START.length : start;
  return { start: from, end, calls: [{ name, args }] };
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
  if (!parsed.ok || !isPlainObject(parsed.value)) return undefined;
  let value = parsed.value;
  if (isPlainObject(value.function) && typeof value.function.name === "string") value = value.function;
  const name = value.name;
  if (typeof name !== "string" || name.trim() === "") return undefined;
  const hasArguments = "arguments" in value || "parameters" in value;
  if (requireArguments && !hasArguments) return undefined;
  return { name: name.trim(), args: "arguments" in value ? value.arguments : value.parameters };
}

/** Reads Qwen3-Coder's `<function=name><parameter=key>value</parameter></function>` markup. */
function readFunctionMarkup(block: string, schemas: ReadonlyMap<string, JsonSchema | undefined>): Found[] {
  const calls: Found[] = [];
  const functionPattern = /<function=([^>\n]*)>([\s\S]*?)(?:<\/function>|(?=<function=)|$)/g;
  for (const match of block.matchAll(functionPattern)) {
    const name = (match[1] ?? "").trim();
    if (name === "") continue;
    const properties = propertiesOf(schemas.get(name));
    const args: Record<string, unknown> = {};
    const parameterPattern = /<parameter=([^>\n]*)>([\s\S]*?)(?:<\/parameter>|(?=<parameter=)|(?=<\/function>)|$)/g;
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
  if (!isPlainObject(schema)) return undefined;
  return isPlainObject(schema.properties) ? schema.properties : undefined;
}

/** Reads a Qwen3-Coder parameter value as the type its schema declares; a string otherwise. */
function typedValue(value: string, schema: unknown): unknown {
  const declared = isPlainObject(schema) ? schema.type : undefined;
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
function findBareCall(body: string, known: ReadonlySet<string>): Segment | undefined {
  const trimmed = body.trim();
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
    if (!inside.startsWith("{")) continue;
    const call = asCall(parseLooseJson(inside), true);
    if (call && known.has(call.name)) fences.push({ start: match.index, end: match.index + match[0].length, calls: [call] });
  }
  return fences.length === 1 ? fences[0] : undefined;
}

/** Stores a call's arguments as JSON text, repaired where they can be read. */
function argumentsText(args: unknown): string {
  if (args === undefined || args === null) return "{}";
  if (typeof args === "string") {
    try {
      return JSON.stringify(parseToolArguments(args));
    } catch {
      return args;
    }
  }
  return JSON.stringify(args) ?? "{}";
}
