/**
 * @module wire/message-shaping
 * What a model's chat template refused about the shape of a transcript, learned per model from
 * the server's words and applied to the messages of every later request: later system messages
 * folded into one at the top, tool-call ids rewritten to the form the server states, and tools
 * described in the system prompt where the server takes no `tools` at all.
 *
 * Each rewrite touches only the messages a request sends, never the transcript, so the host and
 * the compaction read the messages as the run wrote them (a summary still starts with its lead,
 * a call and its answer keep the id the host saw).
 */

import { createHash } from "node:crypto";
import type { Answer, Decision } from "./refusal-answer.js";
import type { Message, ToolDefinition } from "../shapes/config.js";
import { isPlainRecord } from "../text/guards.js";

/** A model's shaping latches, as its capability record holds them. */
export interface ShapingLatches {
  /** Every system message goes folded into one at the top; true once the template asked for its system message first. @default false */
  foldSystem?: boolean;
  /** Tool-call ids are sent as exactly this many letters and digits, once the server stated that rule; 0 or absent sends them as they are. @default 0 */
  toolCallIdLength?: number;
  /** Tools are described in the system prompt instead of the `tools` field, once the server refused tools. @default false */
  toolsInPrompt?: boolean;
}

/** The names a model snapshot may hold the shaping latches under. */
export const SHAPING_SNAPSHOT_KEYS: readonly string[] = Object.freeze(["foldSystem", "toolCallIdLength", "toolsInPrompt", "droppedMessageFields"]);

/** Qwen 3.5's template (and Ollama's renderer) refusing a system message past the first. */
const SYSTEM_FIRST = /system message must be at the beginning/i;

/** Mistral's id rule: "Tool call id was call_0fypS1hVX but must be a-z, A-Z, 0-9, with a length of 9." */
const ID_RULE = /tool call id was\s*\S*\s*but must be a-z, a-z, 0-9, with a length of (\d+)/i;

/** Servers that take no `tools` at all: llama.cpp without --jinja, vLLM without auto tool choice, Ollama models, OpenRouter routes, OpenAI models. */
const TOOLS_REFUSED =
  /tools param requires --jinja|tool choice requires --enable-auto-tool-choice|does not support tools|no endpoints found that support tool use|['"`]tools['"`] is not supported/i;

/** What a refusal's words say about the shape of the messages. */
export type ShapingRefusal = { kind: "system-first" } | { kind: "id-rule"; length: number } | { kind: "tools" } | undefined;

/** Reads what a failure's words say about the shape of the messages; undefined where they say nothing of it. */
export function readShapingRefusal(message: string): ShapingRefusal {
  if (typeof message !== "string" || message === "") return undefined;
  if (SYSTEM_FIRST.test(message)) return { kind: "system-first" };
  const id = ID_RULE.exec(message);
  if (id?.[1]) {
    const length = Number(id[1]);
    if (Number.isInteger(length) && length >= 4 && length <= 64) return { kind: "id-rule", length };
  }
  if (TOOLS_REFUSED.test(message)) return { kind: "tools" };
  return undefined;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (isPlainRecord(part) && part.type === "text" && typeof part.text === "string" ? part.text : "")).join("");
}

function isSystem(message: unknown): boolean {
  return isPlainRecord(message) && (message.role === "system" || message.role === "developer");
}

/**
 * Returns the messages with every system message folded into one at the top, their texts in
 * order, a blank line apart; no text is dropped. Messages with at most one system message, and
 * that one first, come back as they are.
 */
export function foldSystemMessages(messages: readonly Message[]): Message[] {
  const systems = messages.filter(isSystem);
  if (systems.length === 0 || (systems.length === 1 && isSystem(messages[0]))) return messages.slice();
  const texts = systems.map((message) => textOf(message.content)).filter((text) => text !== "");
  const first = systems[0] as Message & { role: "system" | "developer" };
  return [{ role: first.role, content: texts.join("\n\n") }, ...messages.filter((message) => !isSystem(message))];
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** An id of `length` letters and digits derived from `id`, the same every time for the same id. */
function idFor(id: string, length: number, salt: number): string {
  const digest = createHash("sha256")
    .update(salt === 0 ? id : `${id}\u0000${salt}`)
    .digest();
  let out = "";
  for (let index = 0; out.length < length; index += 1) out += ALPHABET[(digest[index % digest.length] ?? 0) % ALPHABET.length];
  return out;
}

/**
 * Returns the messages with every tool-call id not already `length` letters and digits rewritten
 * to one that is, the same rewrite on a call and on the tool message that answers it; the input
 * is not changed. Ids are derived from the original, so every request of a run sends the same.
 */
export function rewriteToolCallIds(messages: readonly Message[], length: number): Message[] {
  const valid = new RegExp(`^[A-Za-z0-9]{${length}}$`);
  const map = new Map<string, string>();
  const taken = new Set<string>();
  for (const message of messages) {
    if (!isPlainRecord(message)) continue;
    const ids = [
      ...(Array.isArray(message.tool_calls) ? message.tool_calls.map((call) => (isPlainRecord(call) ? call.id : undefined)) : []),
      message.tool_call_id,
    ];
    for (const id of ids) if (typeof id === "string" && valid.test(id)) taken.add(id);
  }
  const mapped = (id: unknown): unknown => {
    if (typeof id !== "string" || valid.test(id)) return id;
    let next = map.get(id);
    if (next === undefined) {
      for (let salt = 0; next === undefined || taken.has(next); salt += 1) next = idFor(id, length, salt);
      map.set(id, next);
      taken.add(next);
    }
    return next;
  };
  return messages.map((message) => {
    const record: unknown = message;
    if (!isPlainRecord(record)) return message;
    if (record.role === "tool" && typeof record.tool_call_id === "string" && !valid.test(record.tool_call_id)) {
      return { ...record, tool_call_id: mapped(record.tool_call_id) } as unknown as Message;
    }
    const calls = record.tool_calls;
    if (record.role !== "assistant" || !Array.isArray(calls) || calls.every((call) => !isPlainRecord(call) || valid.test(String(call.id)))) return message;
    return { ...record, tool_calls: calls.map((call: unknown) => (isPlainRecord(call) ? { ...call, id: mapped(call.id) } : call)) } as unknown as Message;
  });
}

/** The opening of the tool description the fallback puts in the system prompt. */
export const TOOLS_IN_PROMPT_LEAD = "You can call tools. To call one, write a block like this in your reply, one block per call:";

function describeTools(tools: readonly ToolDefinition[]): string {
  const lines = tools.map((tool) => {
    const fn = tool?.function;
    const entry: Record<string, unknown> = { name: fn?.name ?? "" };
    if (fn?.description) entry.description = fn.description;
    if (fn?.parameters !== undefined) entry.parameters = fn.parameters;
    return JSON.stringify(entry);
  });
  return [
    TOOLS_IN_PROMPT_LEAD,
    '<tool_call>\n{"name": "tool_name", "arguments": {"key": "value"}}\n</tool_call>',
    "The tools you may call, one JSON description a line:",
    ...lines,
    "A tool's result comes back to you in a <tool_response> block.",
  ].join("\n");
}

/**
 * Returns the messages as a server that takes no `tools` can read them: the tools described in
 * the system prompt (added to the first system message, or as one at the top), each earlier call
 * written as a `<tool_call>` block in its assistant message's text, and each tool result as a user
 * message holding a `<tool_response>` block. The calls the model writes that way are read back
 * by recoverToolCalls.
 */
export function describeToolsInPrompt(messages: readonly Message[], tools: readonly ToolDefinition[]): Message[] {
  const description = describeTools(tools);
  const out: Message[] = messages.map((message): Message => {
    const record: unknown = message;
    if (!isPlainRecord(record)) return message;
    if (record.role === "tool") {
      return { role: "user", content: `<tool_response>\n${textOf(record.content)}\n</tool_response>` };
    }
    const calls = record.tool_calls;
    if (record.role !== "assistant" || !Array.isArray(calls) || calls.length === 0) return message;
    const blocks = calls.map((call: unknown) => {
      const fn: Record<string, unknown> = isPlainRecord(call) && isPlainRecord(call.function) ? call.function : {};
      let args: unknown = {};
      try {
        args = typeof fn.arguments === "string" && fn.arguments.trim() !== "" ? JSON.parse(fn.arguments) : {};
      } catch {
        args = fn.arguments;
      }
      return `<tool_call>\n${JSON.stringify({ name: fn.name, arguments: args })}\n</tool_call>`;
    });
    const { tool_calls: _calls, ...rest } = record;
    const text = textOf(record.content);
    return { ...rest, content: [text, ...blocks].filter((part) => part !== "").join("\n") } as unknown as Message;
  });
  const first = out.findIndex(isSystem);
  if (first >= 0) {
    const system = out[first] as Message;
    out[first] = { role: system.role as "system", content: `${textOf(system.content)}\n\n${description}` };
    return out;
  }
  return [{ role: "system", content: description }, ...out];
}

/** Options of {@link decideShapingRefusal}. */
export interface ShapingDecisionOptions {
  /** Whether a refusal of tools may be answered with the tools described in the prompt. @default false */
  toolsInPrompt?: boolean;
}

function countSystems(sent: Record<string, unknown> | undefined): { count: number; firstAt: number } | undefined {
  if (sent === undefined || !Array.isArray(sent.messages)) return undefined;
  const messages: unknown[] = sent.messages;
  return { count: messages.filter(isSystem).length, firstAt: messages.findIndex(isSystem) };
}

/**
 * Decides the latch that answers a refusal of the transcript's shape, or undefined where the
 * words are not about it: system messages folded into one at the top, tool-call ids rewritten to
 * the stated length, or (where `options.toolsInPrompt` allows it) tools described in the prompt.
 * A system refusal of a request that already had one system message, first, is a stop.
 */
export function decideShapingRefusal(
  message: string,
  model: ShapingLatches | undefined,
  name: string,
  sent: Record<string, unknown> | undefined,
  options: ShapingDecisionOptions = {},
): Decision | undefined {
  const reading = readShapingRefusal(message);
  if (reading === undefined) return undefined;
  if (reading.kind === "tools" && options.toolsInPrompt !== true) return undefined;
  if (!model) return { kind: "pass" };
  let answer: Answer;
  if (reading.kind === "system-first") {
    const systems = countSystems(sent);
    if (systems !== undefined && systems.count <= 1 && systems.firstAt <= 0) {
      return {
        kind: "stuck",
        refused: "system message placement",
        message: `Model ${name} refused the system message's place, though the request had at most one, first.`,
      };
    }
    answer = {
      what: "a system message past the first",
      latch: "shape:foldSystem",
      already: model.foldSystem === true,
      apply: () => {
        model.foldSystem = true;
      },
      notice: `Model ${name} takes one system message, first; every system message is folded into it from now on.`,
    };
  } else if (reading.kind === "id-rule") {
    const length = reading.length;
    answer = {
      what: "tool-call ids",
      latch: `shape:toolCallIds:${length}`,
      already: model.toolCallIdLength === length,
      apply: () => {
        model.toolCallIdLength = length;
      },
      notice: `Model ${name} takes tool-call ids of ${length} letters and digits only; ids are sent rewritten to that form from now on (the transcript keeps its own).`,
    };
  } else {
    if (sent !== undefined && !(Array.isArray(sent.tools) && sent.tools.length > 0)) return undefined;
    answer = {
      what: "tools",
      latch: "shape:toolsInPrompt",
      already: model.toolsInPrompt === true,
      apply: () => {
        model.toolsInPrompt = true;
      },
      notice: `The endpoint takes no tools for model ${name}; the tools are described in the system prompt from now on and calls are read from the reply's text.`,
    };
  }
  return { kind: "answer", answers: [answer] };
}

/** Options of {@link applyShaping}. */
export interface ApplyShapingOptions {
  /** The tools the request would declare. */
  tools?: readonly ToolDefinition[] | undefined;
  /** Whether a model that refused tools gets them described in the prompt. @default true */
  toolsInPrompt?: boolean;
}

/**
 * Applies a model's shaping latches to the messages of one request; returns the messages and
 * whether the tools went into the prompt (the request then declares none).
 */
export function applyShaping(
  messages: readonly Message[],
  model: ShapingLatches | undefined,
  options: ApplyShapingOptions = {},
): { messages: Message[]; toolsInPrompt: boolean } {
  let out = messages.slice();
  const tools = options.tools ?? [];
  const inPrompt = model?.toolsInPrompt === true && options.toolsInPrompt !== false && tools.length > 0;
  if (inPrompt) out = describeToolsInPrompt(out, tools);
  const length = model?.toolCallIdLength;
  if (typeof length === "number" && length > 0 && !inPrompt) out = rewriteToolCallIds(out, length);
  if (model?.foldSystem === true) out = foldSystemMessages(out);
  return { messages: out, toolsInPrompt: inPrompt };
}

/** A model's shaping latches as a snapshot stores them: only what a refusal taught. */
export interface ShapingSnapshot {
  /** True where every system message is folded into the first. */
  foldSystem?: boolean;
  /** The length tool-call ids are rewritten to. */
  toolCallIdLength?: number;
  /** True where tools are described in the prompt. */
  toolsInPrompt?: boolean;
  /** Provider fields the model refused on a message or call. */
  droppedMessageFields?: string[];
}

/** Writes the shaping latches that differ from a fresh record. @internal */
export function shapingSnapshotOf(record: ShapingLatches & { droppedMessageFields?: string[] }): ShapingSnapshot {
  const out: ShapingSnapshot = {};
  if (record.foldSystem === true) out.foldSystem = true;
  if (typeof record.toolCallIdLength === "number" && record.toolCallIdLength > 0) out.toolCallIdLength = record.toolCallIdLength;
  if (record.toolsInPrompt === true) out.toolsInPrompt = true;
  if (Array.isArray(record.droppedMessageFields) && record.droppedMessageFields.length > 0) out.droppedMessageFields = [...record.droppedMessageFields];
  return out;
}

/** Applies stored shaping latches to a record, noting in `ignored` each value it does not understand. @internal */
export function importShaping(
  record: ShapingLatches & { droppedMessageFields?: string[] },
  stored: Record<string, unknown>,
  where: string,
  ignored: string[],
): void {
  for (const flag of ["foldSystem", "toolsInPrompt"] as const) {
    const value = stored[flag];
    if (value === undefined) continue;
    if (typeof value !== "boolean") ignored.push(`${where}.${flag}: not a boolean`);
    else if (value) record[flag] = true;
  }
  const length = stored.toolCallIdLength;
  if (length !== undefined) {
    if (typeof length === "number" && Number.isInteger(length) && length >= 4 && length <= 64) record.toolCallIdLength = length;
    else ignored.push(`${where}.toolCallIdLength: not a whole number from 4 to 64`);
  }
  const fields = stored.droppedMessageFields;
  if (fields === undefined) return;
  if (!Array.isArray(fields)) return void ignored.push(`${where}.droppedMessageFields: not an array`);
  fields.slice(0, 200).forEach((item: unknown, index: number) => {
    if (typeof item !== "string" || !/^[A-Za-z_][\w-]{0,199}$/.test(item)) return void ignored.push(`${where}.droppedMessageFields[${index}]: not understood`);
    const list = (record.droppedMessageFields ??= []);
    if (!list.includes(item)) list.push(item);
  });
}
