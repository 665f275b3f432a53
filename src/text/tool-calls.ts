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

import type { JsonSchema, ToolCall, ToolDefinition } from "../shapes/config.js";
import { parseLooseJson } from "./json-repair.js";
import { findBareCall, findMarkedCalls, SCRATCHPAD_CLOSES } from "./tool-call-markup.js";
import { isPlainRecord } from "./guards.js";
import { AgentCoreError, brand, isErrorNamed, type AgentCoreErrorOptions } from "./error-base.js";

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
  durationMs?: number | undefined;
}

/** Why a call's arguments could not be read: cut off before the end, or not an object. */
export type ToolArgumentsErrorKind = "truncated" | "malformed";

/** Options for a {@link ToolArgumentsError}. */
export interface ToolArgumentsErrorOptions extends AgentCoreErrorOptions {
  /** Whether the arguments were cut off or are simply not an object. */
  kind: ToolArgumentsErrorKind;
  /** The argument text exactly as the model wrote it. */
  raw: string;
  /** The tool the call was for; the default message names it. */
  toolName?: string | undefined;
  /** What is wrong with the text, for the default message of a malformed call ("a number, not an object"). */
  detail?: string | undefined;
  /** Whether the turn stopped at its token ceiling, which the default message of a truncated call says. @default false */
  ceiling?: boolean | undefined;
}

/**
 * Thrown by {@link parseToolArguments} when a call's arguments are not an object even after
 * repair.
 *
 * `kind` is `"truncated"` when the turn stopped at its token ceiling and `"malformed"` otherwise;
 * where the caller did not say whether it did, text ending inside a string or an open object
 * counts as truncated. The message is written
 * for the model to read as the call's result. `raw` is the text as written.
 */
export class ToolArgumentsError extends AgentCoreError {
  override readonly name = "ToolArgumentsError" as const;
  /** Whether the arguments were cut off or are simply not an object. */
  readonly kind: ToolArgumentsErrorKind;
  /** The argument text exactly as the model wrote it. */
  readonly raw: string;
  /** The tool the call was for, where the caller said. */
  readonly toolName: string | undefined;

  static {
    brand(this, "ToolArgumentsError");
  }

  /** Makes the error; `message` defaults to one written for the model. */
  constructor(options: ToolArgumentsErrorOptions) {
    super({
      message: options.message ?? argumentsMessage(options.kind, options.toolName, options.detail, options.ceiling ?? false),
      cause: options.cause,
    });
    this.kind = options.kind;
    this.raw = options.raw;
    this.toolName = options.toolName;
  }

  /** Whether `value` is a ToolArgumentsError, also one from another copy of this package. */
  static override is(value: unknown): value is ToolArgumentsError {
    return isErrorNamed(value, "ToolArgumentsError", "kind");
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
   * Whether the turn stopped at its token ceiling (finish reason `"length"`): true makes
   * arguments that do not parse `"truncated"`, false makes them `"malformed"` however cut off
   * they look. Left out, text that ends inside a string or an open object counts as truncated.
   * @default undefined
   */
  truncated?: boolean | undefined;
  /** The tool the call was for, named in the error's message. */
  toolName?: string | undefined;
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
 * a top-level array or number included, is malformed, and so is text nested deeper than 512
 * levels, which is refused before it is parsed. The time is linear in the text.
 *
 * @param text - The argument text as the model wrote it.
 * @param options - `truncated` when the turn stopped at its ceiling; `toolName` for the message.
 * @returns The arguments object.
 * @throws ToolArgumentsError with kind `"truncated"` when the turn stopped at the ceiling and
 * `"malformed"` otherwise (with `truncated` left out, text that ends inside a string or an open
 * object counts as truncated).
 * @example
 * ```ts
 * parseToolArguments("{'path': 'a.txt', 'force': True,}"); // { path: "a.txt", force: true }
 * ```
 */
export function parseToolArguments(text: string, options: ParseToolArgumentsOptions = {}): Record<string, unknown> {
  const read = readToolArguments(text, options.truncated);
  if (read.ok) return read.value;
  throw new ToolArgumentsError({
    kind: read.kind,
    raw: read.raw,
    ...(options.toolName !== undefined ? { toolName: options.toolName } : {}),
    ...(read.detail !== undefined ? { detail: read.detail } : {}),
    ceiling: options.truncated === true,
  });
}

/** What {@link readToolArguments} made of a call's argument text. */
type ReadArguments = { ok: true; value: Record<string, unknown> } | { ok: false; kind: ToolArgumentsErrorKind; raw: string; detail?: string };

/** {@link parseToolArguments} without the throw; `ceiling` is the caller's word on whether the turn stopped at its ceiling. */
function readToolArguments(text: string, ceiling: boolean | undefined): ReadArguments {
  const fail = (kind: ToolArgumentsErrorKind, raw: string, detail?: string): ReadArguments =>
    detail === undefined ? { ok: false, kind, raw } : { ok: false, kind, raw, detail };
  const input: unknown = text;
  if (typeof input !== "string") {
    // A server that hands over parsed arguments, or none at all.
    if (input === undefined || input === null) return { ok: true, value: {} };
    if (isPlainRecord(input)) return { ok: true, value: { ...input } };
    return fail("malformed", String(input), `a ${typeof input}, not text`);
  }
  let current: unknown = text;
  for (let layer = 0; layer <= MAX_ENCODINGS; layer++) {
    if (typeof current !== "string") break;
    let source = current.trim();
    if (source === "") return { ok: true, value: {} };
    const fenced = source.startsWith("```") ? FENCED.exec(source) : null;
    if (fenced) source = (fenced[1] ?? "").trim();
    if (source === "") return { ok: true, value: {} };
    const parsed = parseLooseJson(source);
    if (!parsed.ok) {
      // The caller's word decides; only where it said nothing does cut-off-looking text count.
      const truncated = ceiling ?? parsed.truncated;
      return fail(truncated ? "truncated" : "malformed", text, truncated ? undefined : `it does not parse: ${parsed.message}`);
    }
    current = parsed.value;
    if (typeof current === "string" && !/^\s*(?:```|[{["'])/.test(current) && current.trim() !== "") {
      return fail("malformed", text, "a string, not an object");
    }
  }
  if (current === null) return { ok: true, value: {} };
  if (isPlainRecord(current)) return { ok: true, value: current };
  return fail("malformed", text, describe(current));
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "a JSON array, not an object";
  if (typeof value === "string") return "a string, not an object";
  return `a ${typeof value}, not an object`;
}

/** Options of {@link recoverToolCalls}. */
export interface RecoverToolCallsOptions {
  /**
   * The tools as the request declared them, used to read Qwen3-Coder's parameter values as their
   * declared types; without a declared type a value stays a string.
   */
  tools?: readonly ToolDefinition[] | undefined;
}

/** What {@link recoverToolCalls} found. */
export interface RecoveredToolCalls {
  /** The calls found, in the order written, with ids `call_recovered_0` onward. */
  calls: ToolCall[];
  /** The reply with the calls taken out; unchanged when none were found. */
  text: string;
}

/**
 * Finds tool calls a model wrote into its reply as text and takes them out of it.
 *
 * Looks only after the last closing scratchpad tag (`</think>` and the other fences' closes) for
 * `<tool_call>` blocks holding JSON (Hermes, Qwen) or Qwen3-Coder's
 * `<function=name><parameter=key>value</parameter></function>` markup (also without the wrapper,
 * for a tool in `toolNames`), Mistral's `[TOOL_CALLS]` in both spellings (a JSON array, and
 * `name[ARGS]{…}` with or without `[CALL_ID]`), and Llama 3's `<|python_tag|>` (Llama 4's
 * `<|python_start|>`) followed by JSON calls, gpt-oss harmony's commentary-channel call
 * (`<|channel|>commentary to=functions.name … <|message|>{…}`), and Gemma 4's
 * `<|tool_call>call:name{key:<|"|>text<|"|>}<tool_call|>`. A tagged call is recovered whatever tool it names,
 * so the loop can answer it. Failing those, a reply that is nothing but one JSON call
 * (`{"name", "arguments"}` or `"parameters"`), or that holds exactly one ``` fenced call, is
 * recovered only when it names a tool in `toolNames`, and so is a reply that is nothing but a
 * Gemma 4 call written without its opening token (`call:name{…}`). Arguments are stored as JSON text, repaired
 * where they could be; a call whose markup cannot be read is left in the text.
 *
 * The time is linear in the reply, however densely it packs markers: a call is read up to the
 * next marker of its own kind (an unclosed `<tool_call>` ends where the next one opens, and
 * arguments that never close end there too), and only a call that reads as nothing that way
 * (its arguments quote its own marker) is read again to the end of the reply, within twice the
 * reply's length in all. Arguments nested past 512 levels are not read.
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
export function recoverToolCalls(text: string, toolNames: readonly string[], options: RecoverToolCallsOptions = {}): RecoveredToolCalls {
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

/** Stores a call's arguments as JSON text, repaired where they can be read. */
function argumentsText(args: unknown): string {
  if (args === undefined || args === null) return "{}";
  if (typeof args === "string") {
    const read = readToolArguments(args, undefined);
    return read.ok ? JSON.stringify(read.value) : args;
  }
  return JSON.stringify(args) ?? "{}";
}
