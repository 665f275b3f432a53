/**
 * @module testing/prefill
 * How llama.cpp answers a request whose last message is the assistant's (a prefill): it carries
 * the message on, and streams it back before the new text unless the request asked for a
 * continuation outright (`continue_final_message: true` with `add_generation_prompt: false`); a
 * reply that is not streamed always holds the prefill and the new text. Both fields true is
 * refused.
 *
 * Read off a llama-server built from llama.cpp's July 2026 source: the first content delta of a
 * prefilled stream is the whole prefill plus the next token.
 */
import type { ProfileName } from "./profile-types.js";

type Body = Record<string, unknown>;

/** llama.cpp's refusal of `continue_final_message` beside `add_generation_prompt: true` (its default). @internal */
export const CONTINUATION_CONFLICT = {
  status: 400,
  body: { error: { code: 400, message: "Cannot set both add_generation_prompt and continue_final_message to true.", type: "invalid_request_error" } },
  source:
    "ggml-org/llama.cpp tools/server/server-common.cpp (oaicompat_chat_params_parse throws it; the handler answers 400 invalid_request_error), as a real llama-server answers it",
} as const;

function trailingAssistant(body: Body): string | undefined {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return undefined;
  const last: unknown = messages[messages.length - 1];
  if (typeof last !== "object" || last === null || (last as Body).role !== "assistant") return undefined;
  const content = (last as Body).content;
  return typeof content === "string" && content !== "" ? content : undefined;
}

/** Whether the family refuses this request's continuation fields as llama.cpp does. @internal */
export function continuationConflict(family: ProfileName, body: Body): boolean {
  return family === "llama.cpp" && body.continue_final_message === true && body.add_generation_prompt !== false;
}

/**
 * The prefill the family repeats before the new text of this request's reply, or undefined for
 * none: llama.cpp repeats a trailing assistant message in every reply that is not streamed, and
 * in a stream unless the request asked for a continuation outright.
 * @internal
 */
export function prefillEcho(family: ProfileName, body: Body, streamed: boolean): string | undefined {
  if (family !== "llama.cpp") return undefined;
  const prefill = trailingAssistant(body);
  if (prefill === undefined) return undefined;
  if (streamed && body.continue_final_message === true && body.add_generation_prompt === false) return undefined;
  return prefill;
}

/**
 * Puts an echoed prefill in front of a stream's first content delta, or in a delta of its own
 * before the finishing chunk where the turn wrote no content; usage and timings stay as counted
 * for the new text, as llama.cpp counts them.
 * @internal
 */
export function echoInChunks(chunks: Array<Record<string, unknown> | string>, echo: string): Array<Record<string, unknown> | string> {
  const out = chunks.map((chunk) => (typeof chunk === "string" ? chunk : structuredClone(chunk)));
  const deltaOf = (chunk: Record<string, unknown> | string): Body | undefined => {
    if (typeof chunk === "string" || !Array.isArray(chunk.choices)) return undefined;
    const choice: unknown = chunk.choices[0];
    const delta = typeof choice === "object" && choice !== null ? (choice as Body).delta : undefined;
    return typeof delta === "object" && delta !== null ? (delta as Body) : undefined;
  };
  const first = out.find((chunk) => typeof deltaOf(chunk)?.content === "string" && deltaOf(chunk)?.content !== "");
  if (first !== undefined) {
    const delta = deltaOf(first) as Body;
    delta.content = echo + String(delta.content);
    return out;
  }
  const finishing = out.findIndex((chunk) => {
    if (typeof chunk === "string" || !Array.isArray(chunk.choices)) return false;
    const choice: unknown = chunk.choices[0];
    return typeof choice === "object" && choice !== null && typeof (choice as Body).finish_reason === "string";
  });
  const template = finishing >= 0 ? (out[finishing] as Body) : undefined;
  if (template === undefined) return out;
  const choice = (template.choices as Body[])[0] as Body;
  const echoed = { ...template, choices: [{ ...choice, delta: { content: echo }, finish_reason: null }] };
  delete (echoed as Body).usage;
  delete (echoed as Body).timings;
  out.splice(finishing, 0, echoed);
  return out;
}

/** Puts an echoed prefill in front of a completion's message content; the token counts stay the new text's, as llama.cpp counts them. @internal */
export function echoInCompletion(completion: Record<string, unknown>, echo: string): Record<string, unknown> {
  const out = structuredClone(completion);
  const choice: unknown = Array.isArray(out.choices) ? out.choices[0] : undefined;
  const message = typeof choice === "object" && choice !== null ? (choice as Body).message : undefined;
  if (typeof message === "object" && message !== null) {
    const content = (message as Body).content;
    (message as Body).content = echo + (typeof content === "string" ? content : "");
  }
  return out;
}
