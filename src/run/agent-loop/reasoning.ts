/**
 * @module run/agent-loop/reasoning
 * The scratchpad behind a tool call kept on its assistant message while the run goes on, and
 * dropped from the run's messages once the model has answered.
 *
 * gpt-oss and DeepSeek in thinking mode read the analysis behind a tool call off the assistant
 * message on the next request, so a tool-call turn's reasoning rides on its message as
 * `reasoning_content` (buildBody sends it in the form the model and endpoint take). Once the
 * model answers, no model needs it any more, and it would be context paid for on every later turn.
 */

import type { AssistantMessage, Message, Turn } from "../../shapes/config.js";
import { questionIndex, replaceTranscript, type LoopRun } from "./run.js";

/** Puts a tool-call turn's reasoning on its assistant message; a turn without calls or without reasoning is left as it is. @internal */
export function keepReasoning(said: AssistantMessage, turn: Turn): void {
  const reasoning = typeof turn?.reasoning === "string" ? turn.reasoning : "";
  if (!Array.isArray(said.tool_calls) || said.tool_calls.length === 0 || reasoning.trim() === "") return;
  said.reasoning_content = reasoning;
}

/**
 * Takes `reasoning_content` off the assistant messages after the question, the run's own steps
 * (a resumed run's included), once the model has answered; the messages are copied, never
 * changed in place, and the ledger moves onto the new transcript. @internal
 */
export function dropReplayedReasoning(run: LoopRun): void {
  const from = Math.max(0, questionIndex(run) + 1);
  let changed = false;
  const next: Message[] = run.transcript.map((message, index) => {
    if (index < from || message?.role !== "assistant" || !("reasoning_content" in message)) return message;
    changed = true;
    const { reasoning_content: _dropped, ...rest } = message;
    return rest;
  });
  if (changed) replaceTranscript(run, next);
}
