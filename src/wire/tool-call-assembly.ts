/**
 * @module wire/tool-call-assembly
 * The tool calls of one streamed reply put together from their pieces: which piece continues
 * which call (by index, by id, or by name where a server sends every call at index 0), the
 * arguments appended as they arrive, and the finished calls in the order the server numbered them.
 */

import { randomUUID } from "node:crypto";
import type { ToolCall } from "../shapes/config.js";
import { isRecord } from "../text/guards.js";
import { isCallProviderField, mergeProviderField } from "./provider-fields.js";

/** An id in the shape OpenAI gives its calls, for a call the server sent without one. */
function defaultCallId(): string {
  return `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`;
}

/** One call as its pieces have built it so far. */
interface OpenCall {
  index: number;
  id: string;
  name: string;
  arguments: string;
  /** Fields the server put on the call that the library does not read, as streamed. */
  extra?: Record<string, unknown>;
}

/**
 * Whether a tool-call piece at an index already holding `call` opens a call of its own: it
 * carries an id other than the call's, or it names a function once the call has a name and
 * arguments that are complete JSON. A piece repeating the call's id (vLLM sends it on every
 * chunk of one call) continues it.
 */
function startsAnother(call: OpenCall, id: string | undefined, name: string | undefined): boolean {
  if (id !== undefined && call.id !== "") return id !== call.id;
  if (id !== undefined || name === undefined || call.name === "") return false;
  return isCompleteJson(call.arguments);
}

/** Whether the text parses as JSON as it stands. */
function isCompleteJson(text: string): boolean {
  if (text.trim() === "") return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** gpt-oss harmony's end-of-call token, which a server passing harmony through leaves on the arguments. */
const CALL_TAIL = /\s*<\|call\|>\s*$/;

/** The arguments without a trailing harmony end-of-call token. */
function withoutCallTail(text: string): string {
  return text.endsWith(">") || text.endsWith(" ") || text.endsWith("\n") ? text.replace(CALL_TAIL, "") : text;
}

/** The tool calls of one reply, built from the `tool_calls` pieces of its deltas as they arrive. */
export class ToolCallAssembly {
  readonly #calls: OpenCall[] = [];
  #last: OpenCall | undefined;

  /** Folds one `tool_calls` piece of a delta into the call it continues, or starts a call with it. */
  add(piece: Record<string, unknown>): void {
    const id = typeof piece.id === "string" && piece.id !== "" ? piece.id : undefined;
    const fn = isRecord(piece.function) ? piece.function : undefined;
    const name = typeof fn?.name === "string" && fn.name !== "" ? fn.name : undefined;
    const rawArguments = fn?.arguments;
    // A few servers send a whole call's arguments as an object rather than a JSON string.
    const args = typeof rawArguments === "string" ? rawArguments : isRecord(rawArguments) ? JSON.stringify(rawArguments) : undefined;
    let call: OpenCall | undefined;
    if (typeof piece.index === "number") {
      const last = this.#last;
      call = last !== undefined && last.index === piece.index ? last : this.#calls.findLast((open) => open.index === piece.index);
      // Ollama sends parallel calls all at index 0: a new id, or a new name after a complete
      // call, at an index already holding a call starts another call there.
      if (call !== undefined && startsAnother(call, id, name)) call = undefined;
      if (call === undefined) {
        call = { index: piece.index, id: "", name: "", arguments: "" };
        this.#calls.push(call);
      }
    } else {
      // No index: a new id starts a call, anything else continues the last one.
      const last = this.#last;
      if (last !== undefined && (id === undefined || id === last.id)) call = last;
      else {
        const index = this.#calls.reduce((highest, open) => Math.max(highest, open.index + 1), 0);
        call = { index, id: "", name: "", arguments: "" };
        this.#calls.push(call);
      }
    }
    this.#last = call;
    if (call.id === "" && id !== undefined) call.id = id;
    if (call.name === "" && name !== undefined) call.name = name;
    if (args !== undefined && args !== "") call.arguments += args;
    for (const key in piece) {
      if (!isCallProviderField(key, piece[key])) continue;
      const extra = (call.extra ??= {});
      extra[key] = mergeProviderField(extra[key], piece[key]);
    }
  }

  /**
   * The calls read so far, ordered by the index the server gave them.
   *
   * @param newCallId - Makes an id for a call the server sent without one; defaults to "call_" and 24 random hexadecimal digits.
   */
  calls(newCallId: () => string = defaultCallId): ToolCall[] {
    return [...this.#calls]
      .sort((a, b) => a.index - b.index)
      .map((call) => ({
        ...call.extra,
        id: call.id !== "" ? call.id : newCallId(),
        type: "function" as const,
        function: { name: call.name, arguments: withoutCallTail(call.arguments) },
      }));
  }
}
