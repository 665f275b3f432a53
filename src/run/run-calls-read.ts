/**
 * @module run-calls-read
 * What a step reads: the calls the model made, with their arguments repaired and their ids made
 * distinct, and what a tool handed back, as the text the model reads; {@link preview} cuts either
 * for a watcher. run-calls re-exports every name here.
 */

import type { ToolCall } from "../shapes/config.js";
import { parseToolArguments, ToolArgumentsError, type ToolCallRequest } from "../text/tool-calls.js";
import { positiveInteger } from "../text/guards.js";

/** The longest preview a watcher is handed, in characters, unless told otherwise. */
export const PREVIEW_CHARS = 500;

/** The longest tool result the model is handed, in characters, unless told otherwise. */
export const MAX_RESULT_CHARS = 100_000;

/** A call as a step read it: what the transcript keeps, what dispatch is handed, and why it cannot run. */
export interface ReadCall {
  /** The call as the transcript keeps it: repaired arguments as JSON, `{}` where they could not be read. */
  call: ToolCall;
  /** The request as dispatch would be handed it: repaired arguments, the model's own text as `raw`. */
  request: ToolCallRequest;
  /** Why the arguments could not be read, where they could not. */
  error?: ToolArgumentsError | undefined;
}

/** Options for {@link readCalls}. */
export interface ReadCallsOptions {
  /** The turn stopped at its token ceiling, so arguments that do not parse were cut off. @default false */
  truncated?: boolean | undefined;
}

/** A value as text: a string as it is, nothing as "", anything else its String form. @internal */
export function text(value: unknown): string {
  return typeof value === "string" ? value : value === undefined || value === null ? "" : String(value);
}

/**
 * Reads a step's tool calls: arguments repaired, unreadable ones replayed as `{}`, ids distinct.
 *
 * Arguments go through parseToolArguments; what still is not an object keeps its
 * ToolArgumentsError (kind `truncated` with `truncated: true`) and is replayed as `{}`, since a
 * server that parses replayed arguments would refuse the originals on every later request. A call
 * with no id, or one already used in the step, is given `call_<index>` (suffixed until distinct).
 *
 * @param calls - The turn's tool calls.
 * @param options - `truncated` when the turn stopped at its ceiling.
 */
export function readCalls(calls: readonly ToolCall[], options: ReadCallsOptions = {}): ReadCall[] {
  const list = Array.isArray(calls) ? calls : [];
  const ids = new Set<string>();
  return list.map((entry, index) => {
    const name = text(entry?.function?.name);
    const raw =
      typeof entry?.function?.arguments === "string"
        ? entry.function.arguments
        : entry?.function?.arguments === undefined
          ? ""
          : (JSON.stringify(entry.function.arguments) ?? "");
    let id = text(entry?.id);
    if (id === "" || ids.has(id)) {
      let candidate = `call_${index}`;
      for (let suffix = 1; ids.has(candidate); suffix += 1) candidate = `call_${index}_${suffix}`;
      id = candidate;
    }
    ids.add(id);
    let args: Record<string, unknown> = {};
    let error: ToolArgumentsError | undefined;
    try {
      args = parseToolArguments(raw, { truncated: options.truncated === true, toolName: name });
    } catch (caught) {
      error = ToolArgumentsError.is(caught) ? caught : new ToolArgumentsError({ kind: "malformed", raw, toolName: name, cause: caught });
    }
    let replayed = "{}";
    try {
      replayed = JSON.stringify(args) ?? "{}";
    } catch {
      replayed = "{}";
    }
    const read: ReadCall = {
      call: { id, type: "function", function: { name, arguments: replayed } },
      request: { id, name, args, raw },
    };
    if (error) read.error = error;
    return read;
  });
}

/**
 * Cuts a long argument or result to a length a watcher can show, saying how long it was.
 *
 * A string is cut; anything else is written as JSON first. Text at or under `maxChars` comes back
 * as it is; longer text keeps its head and ends with `… [N chars]`.
 *
 * @param value - The text or value to show.
 * @param maxChars - The most characters to keep. @default 500
 */
export function preview(value: unknown, maxChars: number = PREVIEW_CHARS): string {
  let source: string;
  if (typeof value === "string") source = value;
  else {
    try {
      source = JSON.stringify(value) ?? String(value);
    } catch {
      source = Object.prototype.toString.call(value);
    }
  }
  const limit = positiveInteger(maxChars) ?? PREVIEW_CHARS;
  if (source.length <= limit) return source;
  return `${source.slice(0, limit)}… [${source.length} chars]`;
}

function partsText(parts: unknown[]): string | undefined {
  if (!parts.every((part) => part && typeof part === "object" && typeof (part as { type?: unknown }).type === "string")) return undefined;
  return parts
    .map((part) => {
      const typed = part as { type: string; text?: unknown };
      return typed.type === "text" && typeof typed.text === "string" ? typed.text : JSON.stringify(part);
    })
    .join("\n");
}

/** Reads what a dispatch returned as the text the model reads and whether the tool succeeded. */
export function readToolResult(value: unknown): { ok: boolean; content: string } {
  if (typeof value === "string") return { ok: true, content: value };
  if (value === undefined || value === null) return { ok: true, content: "" };
  if (Array.isArray(value)) {
    const joined = partsText(value);
    if (joined !== undefined) return { ok: true, content: joined };
  } else if (typeof value === "object") {
    const record = value as { content?: unknown; isError?: unknown };
    if (Array.isArray(record.content)) {
      const joined = partsText(record.content);
      if (joined !== undefined) return { ok: record.isError !== true, content: joined };
    }
    if (typeof record.content === "string") return { ok: record.isError !== true, content: record.content };
  }
  try {
    return { ok: true, content: JSON.stringify(value) ?? String(value) };
  } catch {
    return { ok: true, content: String(value) };
  }
}

/** Cuts a result the model is handed to `maxChars`, with a note of what was left out. @internal */
export function cut(content: string, maxChars: number): string {
  if (content.length <= maxChars) return content;
  return `${content.slice(0, maxChars)}\n[The result was cut here: ${content.length - maxChars} more characters were left out.]`;
}
