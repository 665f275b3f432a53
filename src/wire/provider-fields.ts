/**
 * @module wire/provider-fields
 * Fields a server puts on a tool call or an assistant message that the library does not read
 * itself: kept as they were streamed, sent back with their message to the endpoint and model
 * that wrote them, left out of a request to any other, and dropped for a model that refused one.
 *
 * Nothing here knows a provider: a field is whatever the stream carried beside the names the
 * chat-completions shape defines. Gemini's `extra_content` on each call and OpenRouter's
 * `reasoning_details` on the message are two such fields.
 */

import type { Answer, Decision } from "./refusal-answer.js";
import type { FieldsOrigin, Message } from "../shapes/config.js";
import { isPlainRecord } from "../text/guards.js";
import { normaliseBaseUrl } from "./base-url.js";

/** The largest provider field kept on a transcript, in characters of its JSON (64 KB). */
export const MAX_PROVIDER_FIELD_CHARS = 65_536;

/** The names a streamed assistant delta may carry that the library reads, or that mean nothing to send back. */
const MESSAGE_NAMES: ReadonlySet<string> = new Set(["role", "content", "reasoning_content", "reasoning", "tool_calls", "function_call", "refusal", "name"]);

/** The names of a streamed tool-call piece the library reads. */
const CALL_NAMES: ReadonlySet<string> = new Set(["index", "id", "type", "function"]);

/** String fields of a streamed array item that arrive in pieces and are joined. */
const JOINED: ReadonlySet<string> = new Set(["text", "summary"]);

/** A model's latch: the provider fields it refused, left out of every request to it. */
export interface ProviderFieldLatches {
  /** Names of message or call fields the model refused. @default [] */
  droppedMessageFields?: string[];
}

/** Whether a streamed delta's field is one the library does not read and a null says nothing. */
export function isMessageProviderField(name: string, value: unknown): boolean {
  return !MESSAGE_NAMES.has(name) && value !== null && value !== undefined;
}

/** Whether a streamed tool-call piece's field is one the library does not read. */
export function isCallProviderField(name: string, value: unknown): boolean {
  return !CALL_NAMES.has(name) && value !== null && value !== undefined;
}

function mergeItems(before: unknown[], pieces: unknown[]): unknown[] {
  const out = before.slice();
  for (const piece of pieces) {
    const at = isPlainRecord(piece) && typeof piece.index === "number" ? out.findIndex((item) => isPlainRecord(item) && item.index === piece.index) : -1;
    if (at >= 0) out[at] = mergeRecord(out[at] as Record<string, unknown>, piece as Record<string, unknown>, true);
    else out.push(piece);
  }
  return out;
}

function mergeRecord(before: Record<string, unknown>, piece: Record<string, unknown>, item: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { ...before };
  for (const [key, value] of Object.entries(piece)) {
    const old = out[key];
    if (item && JOINED.has(key) && typeof old === "string" && typeof value === "string") out[key] = old + value;
    else out[key] = mergeProviderField(old, value);
  }
  return out;
}

/**
 * Folds one streamed piece of a provider field into what came before: arrays are appended, an
 * array item carrying the same `index` as an earlier one continues it (its `text` and `summary`
 * joined), objects merge key by key, and anything else is replaced by the latest piece.
 */
export function mergeProviderField(before: unknown, piece: unknown): unknown {
  if (before === undefined) return piece;
  if (Array.isArray(before) && Array.isArray(piece)) return mergeItems(before, piece);
  if (isPlainRecord(before) && isPlainRecord(piece)) return mergeRecord(before, piece, false);
  return piece;
}

/** Why a provider field cannot go on a transcript, or undefined where it can. */
export function providerFieldProblem(value: unknown): string | undefined {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    return `it cannot be written as JSON (${error instanceof Error ? error.message : String(error)})`;
  }
  if (text === undefined) return "it cannot be written as JSON";
  if (text.length > MAX_PROVIDER_FIELD_CHARS) return `it is ${text.length} characters of JSON, over the ${MAX_PROVIDER_FIELD_CHARS} kept`;
  return undefined;
}

/** Whether an origin names this endpoint and model (base URLs compared normalised). */
function sameOrigin(origin: FieldsOrigin, baseUrl: string | undefined, model: string): boolean {
  if (origin.model !== model) return false;
  if (baseUrl === undefined) return true;
  try {
    return normaliseBaseUrl(origin.baseUrl) === normaliseBaseUrl(baseUrl);
  } catch {
    return origin.baseUrl === baseUrl;
  }
}

/** Where a request goes, for {@link shapeProviderFields}. */
export interface ProviderFieldTarget {
  /** The endpoint's base URL; absent compares the model alone. */
  baseUrl?: string;
  /** The model's name. */
  model: string;
  /** The fields this model refused. */
  dropped: readonly string[];
  /** Told a sentence for each field left out because it cannot be sent. */
  onNotice?: (text: string) => void;
}

function originOf(message: Record<string, unknown>): FieldsOrigin | undefined {
  const origin = message.fieldsOrigin;
  if (!isPlainRecord(origin) || typeof origin.model !== "string" || typeof origin.baseUrl !== "string") return undefined;
  const fields = Array.isArray(origin.fields) ? origin.fields.filter((name): name is string => typeof name === "string") : [];
  return { baseUrl: origin.baseUrl, model: origin.model, fields };
}

function sendable(name: string, value: unknown, target: ProviderFieldTarget, where: string): boolean {
  const problem = providerFieldProblem(value);
  if (problem === undefined) return true;
  try {
    target.onNotice?.(`The field ${name} on ${where} was left out of the request: ${problem}.`);
  } catch {
    // A notice sink that throws does not cost the request.
  }
  return false;
}

function shapeCalls(calls: unknown[], keep: boolean, target: ProviderFieldTarget, index: number): { calls: unknown[]; changed: boolean } {
  let changed = false;
  const out = calls.map((call, at) => {
    if (!isPlainRecord(call)) return call;
    const extra = Object.keys(call).filter((key) => !CALL_NAMES.has(key));
    if (extra.length === 0) return call;
    const copy: Record<string, unknown> = { ...call };
    for (const key of extra) {
      if (keep && !target.dropped.includes(key) && sendable(key, call[key], target, `tool call ${at} of message ${index}`)) continue;
      delete copy[key];
      changed = true;
    }
    return copy;
  });
  return { calls: out, changed };
}

/**
 * Returns the messages as one request to `target` sends them; the input is not changed.
 *
 * `fieldsOrigin` is never sent. A message stamped with another endpoint or model loses the
 * message fields its origin lists and every unread field on its calls; one stamped with this
 * endpoint and model keeps them, less those the model refused and any that cannot be written as
 * JSON or are over 64 KB (told to `onNotice`). A message without a stamp is the host's own and
 * goes as given, less the refused fields.
 *
 * @param messages - The messages of a request.
 * @param target - The endpoint, model and refused fields the request is for.
 */
export function shapeProviderFields(messages: readonly Message[], target: ProviderFieldTarget): Message[] {
  return messages.map((message, index) => {
    if (!isPlainRecord(message) || message.role !== "assistant") return message;
    const origin = originOf(message);
    const keep = origin === undefined || sameOrigin(origin, target.baseUrl, target.model);
    const refused = target.dropped.some((name) => name in message);
    const calls = Array.isArray(message.tool_calls) ? shapeCalls(message.tool_calls, keep, target, index) : undefined;
    if (!("fieldsOrigin" in message) && !refused && !calls?.changed && origin === undefined) return message;
    const copy: Record<string, unknown> = { ...message };
    delete copy.fieldsOrigin;
    for (const name of origin?.fields ?? []) {
      if (!(name in copy)) continue;
      if (!keep || target.dropped.includes(name) || !sendable(name, copy[name], target, `message ${index}`)) delete copy[name];
    }
    for (const name of target.dropped) if (!MESSAGE_NAMES.has(name)) delete copy[name];
    if (calls?.changed) copy.tool_calls = calls.calls;
    return copy as unknown as Message;
  });
}

/**
 * A message field refused by name: vLLM's pydantic `messages.2.tool_calls.0.extra_content: Extra
 * inputs are not permitted`, OpenAI's `Additional properties are not allowed ('x' was unexpected)`
 * with a path under messages, and "Unrecognized … messages[2].x".
 */
const MESSAGE_FIELD_REFUSALS: readonly RegExp[] = [
  /messages[.[]\s*\d+\]?(?:\.tool_calls[.[]\s*\d+\]?)?\.([A-Za-z_][\w-]*)['"`]?\s*[:,-]?\s*(?:extra inputs are not permitted|is not supported|unsupported|unknown|not allowed|unrecognized)/i,
  /additional properties are not allowed \(['"`]([A-Za-z_][\w-]*)['"`] was unexpected\)[^\n]*messages/i,
  /unrecognized (?:request )?argument[s]? supplied:?\s*messages[.[]\s*\d+\]?(?:\.tool_calls[.[]\s*\d+\]?)?\.([A-Za-z_][\w-]*)/i,
];

/** Reads the name of a message or call field a refusal's words object to; undefined where they name none. */
export function readMessageFieldRefusal(message: string): string | undefined {
  if (typeof message !== "string") return undefined;
  for (const pattern of MESSAGE_FIELD_REFUSALS) {
    const match = pattern.exec(message);
    if (match?.[1]) return match[1];
  }
  return undefined;
}

/** Whether any assistant message (or one of its calls) of a sent body carries the field. */
function bodyCarries(sent: Record<string, unknown> | undefined, field: string): boolean | undefined {
  if (sent === undefined) return undefined;
  const messages = Array.isArray(sent.messages) ? sent.messages : [];
  return messages.some(
    (message) =>
      isPlainRecord(message) &&
      (field in message || (Array.isArray(message.tool_calls) && message.tool_calls.some((call) => isPlainRecord(call) && field in call))),
  );
}

/**
 * Decides the answer to a refusal of a provider field on a message or a call: the field is left
 * out of every request to the model from now on. A refusal naming a field the request did not
 * carry is a stop; a field the library reads itself (reasoning, content) is not this module's.
 */
export function decideProviderFieldRefusal(
  message: string,
  model: ProviderFieldLatches | undefined,
  name: string,
  sent: Record<string, unknown> | undefined,
): Decision | undefined {
  const field = readMessageFieldRefusal(message);
  if (field === undefined || MESSAGE_NAMES.has(field) || CALL_NAMES.has(field)) return undefined;
  if (!model) return { kind: "pass" };
  if (bodyCarries(sent, field) === false) {
    return { kind: "stuck", refused: field, message: `The endpoint refused the message field ${field} for model ${name}, which the request did not send.` };
  }
  const answer: Answer = {
    what: `the message field ${field}`,
    latch: `messageField:${field}`,
    already: model.droppedMessageFields?.includes(field) === true,
    apply: () => {
      const list = (model.droppedMessageFields ??= []);
      if (!list.includes(field)) list.push(field);
    },
    notice: `Model ${name} refused the field ${field} on a message; it is left out of every request to this model from now on.`,
  };
  return { kind: "answer", answers: [answer] };
}
