/**
 * @module run/agent-loop/system-option
 * How the loop's `system` option meets the system messages a host put in `messages`.
 *
 * The option is sent first. Where the transcript itself opens with a system message, the two
 * go as one message, the option's text first and the transcript's after a blank line, rather
 * than as two system messages in a row: several chat templates (Qwen 3.5's among them) take one
 * system message only, and nothing is lost by joining two that sit side by side. A system
 * message further down the transcript (a compaction's summary) is left where it is; a model that
 * refuses it has it folded in by the latch the refusal teaches.
 */

import type { Message } from "../../shapes/config.js";
import { contentText } from "../../text/content-text.js";

/** The messages a step sends: the system option joined with a leading system message of the transcript, or put before it. @internal */
export function withSystemOption(system: string, transcript: readonly Message[]): Message[] {
  if (!system) return [...transcript];
  const first = transcript[0];
  if (first === undefined || first.role !== "system" || (first.name !== undefined && first.name !== ""))
    return [{ role: "system", content: system }, ...transcript];
  const text = contentText(first.content);
  return [{ role: "system", content: text === "" ? system : `${system}\n\n${text}` }, ...transcript.slice(1)];
}
