/**
 * @module testing/profile-deepseek
 * DeepSeek's API as the loopback endpoint imitates it: its listing, how it streams a thinking
 * turn, and the check its thinking mode makes on a history with tool calls.
 */
import type { ErrorAnswer } from "./profile-types.js";
import { DEEPSEEK_MISSING } from "./refusal-wordings-replay.js";
import { isPlainRecord } from "./guards.js";

/** DeepSeek's `/models` body: `{ object: "list", data }`. */
export function deepseekListing(models: Record<string, unknown>[]): unknown {
  return { object: "list", data: models };
}

/** A DeepSeek `/models` entry: only its id, `object` and `owned_by: "deepseek"`. */
export function deepseekModelEntry(id: string): Record<string, unknown> {
  return { id, object: "model", owned_by: "deepseek" };
}

/**
 * Whether a request runs in thinking mode: `thinking: { type: "enabled" }`, or a thinking model
 * (deepseek-reasoner, the V4 models) not told `thinking: { type: "disabled" }`.
 */
export function deepseekThinking(body: Record<string, unknown>): boolean {
  const thinking = isPlainRecord(body.thinking) ? body.thinking.type : undefined;
  if (thinking === "enabled") return true;
  if (thinking === "disabled") return false;
  return typeof body.model === "string" && /reasoner|v4/i.test(body.model);
}

/**
 * The index of the first assistant message a thinking-mode request must carry
 * `reasoning_content` on and does not: one with tool calls, or, with `everyTurn`, any assistant
 * message; only while the request declares tools. -1 where there is none.
 */
export function missingReasoningAt(body: Record<string, unknown>, everyTurn: boolean): number {
  if (!Array.isArray(body.tools) || body.tools.length === 0 || !Array.isArray(body.messages)) return -1;
  return body.messages.findIndex((message: unknown) => {
    if (!isPlainRecord(message) || message.role !== "assistant") return false;
    const calls = Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
    return (calls || everyTurn) && typeof message.reasoning_content !== "string";
  });
}

/**
 * DeepSeek's own check on a chat body: in thinking mode, with tools declared, an assistant
 * message with tool calls must carry `reasoning_content` (api-docs.deepseek.com/guides/thinking_mode,
 * "Tool Calls"); a request without it is refused in DeepSeek's words.
 */
export function deepseekCheck(body: Record<string, unknown>): ErrorAnswer | undefined {
  if (!deepseekThinking(body)) return undefined;
  const at = missingReasoningAt(body, false);
  if (at < 0) return undefined;
  const model = typeof body.model === "string" ? body.model : "deepseek-v4-flash";
  return { status: DEEPSEEK_MISSING.status, body: DEEPSEEK_MISSING.body({ model, value: at }), source: DEEPSEEK_MISSING.source, refusal: "reasoningMissing" };
}
