/**
 * @module run/agent-loop/provider-fields
 * The fields a server put on a turn's calls and message that the library does not read, carried
 * onto the assistant message the run appends, stamped with the endpoint and model they came
 * from so a request to any other leaves them out.
 */

import type { AssistantMessage, ToolCall, Turn } from "../../shapes/config.js";
import { isPlainRecord } from "../../text/guards.js";
import { providerFieldProblem } from "../../wire/provider-fields.js";
import type { LoopRun } from "./run.js";

const CALL_NAMES: ReadonlySet<string> = new Set(["id", "type", "function"]);

/** Whether a field may go on the transcript; where not, says why once and returns false. */
function keepable(run: LoopRun, name: string, value: unknown, where: string): boolean {
  const problem = providerFieldProblem(value);
  if (problem === undefined) return true;
  run.onNotice(`The server's field ${name} on ${where} was not kept on the transcript: ${problem}. A model that needs it back may refuse the next request.`);
  return false;
}

/**
 * Puts the turn's provider fields on the assistant message: each call's beside its id, name and
 * arguments (matched by position, the order the turn listed them), the message's on the message,
 * and `fieldsOrigin` naming the endpoint, model and message fields. A field that cannot be
 * written as JSON, or is over 64 KB, is left off with a notice. @internal
 */
export function keepProviderFields(run: LoopRun, said: AssistantMessage, turn: Turn): void {
  const fields: string[] = [];
  let any = false;
  const calls = said.tool_calls;
  if (Array.isArray(calls)) {
    said.tool_calls = calls.map((call, index): ToolCall => {
      const source: unknown = turn.toolCalls?.[index];
      if (!isPlainRecord(source)) return call;
      const extra = Object.keys(source).filter((key) => !CALL_NAMES.has(key));
      if (extra.length === 0) return call;
      const copy: ToolCall = { ...call };
      for (const key of extra) {
        if (!keepable(run, key, source[key], `tool call ${call.id}`)) continue;
        copy[key] = source[key];
        any = true;
      }
      return copy;
    });
  }
  const messageFields = turn.messageFields;
  if (isPlainRecord(messageFields)) {
    for (const [key, value] of Object.entries(messageFields)) {
      if (key === "fieldsOrigin" || key in said || !keepable(run, key, value, "the assistant message")) continue;
      said[key] = value;
      fields.push(key);
      any = true;
    }
  }
  if (any) said.fieldsOrigin = { baseUrl: run.config.baseUrl, model: run.config.model, fields };
}
