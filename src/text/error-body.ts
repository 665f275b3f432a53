/**
 * @module text/error-body
 * Reads what a failed request said, whatever shape the failure arrived in.
 *
 * Servers answer refusals as OpenAI-shaped JSON, as `{ error: "text" }`, as a nested
 * `error.error`, as Baidu's `{ error_code, error_msg }`, as HTML from a proxy, or as an empty body; the SDK wraps them in an APIError,
 * and a stream can carry one inside a 200. Everything that classifies a failure reads it through
 * {@link describeError}, so the wording is found the same way everywhere.
 */

import { isRecord } from "./guards.js";

/** What a failure said, flattened. */
export interface ErrorDescription {
  /** The HTTP status, where one is known. */
  status?: number | undefined;
  /** Every message-like string found in the error and its body, joined by " | ". */
  message: string;
  /** The error code the body carried (`context_length_exceeded`, …), where any. */
  code?: string | undefined;
  /** The error type the body carried (`invalid_request_error`, `unavailable_error`, …), where any. */
  type?: string | undefined;
  /** The request parameter the body blamed, where any. */
  param?: string | undefined;
  /**
   * The numeric error code a `{ error_code, error_msg }` body carried (Baidu Qianfan's
   * `error_code: 18`), where any; a numeric `code` outside the HTTP range counts too.
   */
  errorCode?: number | undefined;
}

/**
 * The failure a stream chunk (or a body that did not stream) carries in place of a reply, as the
 * body the SDK would build its APIError from; undefined for a reply chunk.
 *
 * Read per chunk, so it costs one property test on a reply: any `error` that is set is the
 * failure, whatever else the chunk holds — OpenAI's `{ error }` with no `choices`, a router's
 * error chunk with `choices: []`, and OpenRouter's `error` beside a choice whose `finish_reason`
 * is `"error"` alike. Baidu Qianfan's bare `{ error_code, error_msg }` (its message under
 * `message`) and DeepInfra's choiceless `{ error_type, error_message }` count where no reply is
 * in the chunk.
 */
export function streamedError(chunk: Record<string, unknown>): unknown {
  const error = chunk.error;
  if (error !== undefined && error !== null && error !== false && error !== "") return error;
  const choices = chunk.choices;
  if (Array.isArray(choices) && choices.length > 0) return undefined;
  if (typeof chunk.error_code === "number" && typeof chunk.error_msg === "string") {
    return { message: chunk.error_msg, error_code: chunk.error_code, error_msg: chunk.error_msg };
  }
  if (typeof chunk.error_message === "string" && chunk.error_message !== "") {
    return { message: chunk.error_message, ...(typeof chunk.error_type === "string" ? { type: chunk.error_type } : {}) };
  }
  return undefined;
}

const MAX_DEPTH = 6;

function collect(value: unknown, into: ErrorDescription, texts: string[], depth: number, seen: Set<unknown>): void {
  if (depth > MAX_DEPTH || value === undefined || value === null) return;
  if (typeof value === "string") {
    const text = value.trim();
    if (text) texts.push(text.length > 4000 ? text.slice(0, 4000) : text);
    return;
  }
  if (typeof value === "number") return;
  if (!isRecord(value) || seen.has(value)) return;
  seen.add(value);
  const status = value.status ?? value.statusCode;
  if (into.status === undefined && typeof status === "number" && status >= 100 && status < 600) into.status = status;
  if (into.code === undefined && typeof value.code === "string") into.code = value.code;
  if (into.code === undefined && typeof value.code === "number" && value.code >= 100 && value.code < 600 && into.status === undefined) {
    into.status = value.code;
  }
  if (into.errorCode === undefined && typeof value.error_code === "number" && Number.isSafeInteger(value.error_code)) {
    into.errorCode = value.error_code;
  }
  if (into.errorCode === undefined && typeof value.code === "number" && Number.isSafeInteger(value.code) && (value.code < 100 || value.code >= 600)) {
    into.errorCode = value.code;
  }
  if (into.type === undefined && typeof value.type === "string") into.type = value.type;
  if (into.param === undefined && typeof value.param === "string") into.param = value.param;
  for (const key of ["message", "detail", "msg", "error_msg", "error", "errors", "reason"]) {
    if (key in value) {
      const inner = value[key];
      if (Array.isArray(inner)) for (const item of inner.slice(0, 8)) collect(item, into, texts, depth + 1, seen);
      else collect(inner, into, texts, depth + 1, seen);
    }
  }
  // The openai SDK keeps the parsed body on `error`; a raw body may hang off `body` or `response`.
  for (const key of ["body", "cause"]) {
    if (key in value) collect(value[key], into, texts, depth + 1, seen);
  }
}

/** Flattens any caught value into its status, code, type, param and message text; never throws. */
export function describeError(error: unknown): ErrorDescription {
  const into: ErrorDescription = { message: "" };
  const texts: string[] = [];
  try {
    collect(error, into, texts, 0, new Set());
  } catch {
    // A hostile getter must not turn a classification into a crash.
  }
  const unique = [...new Set(texts)];
  into.message = unique.join(" | ");
  return into;
}
