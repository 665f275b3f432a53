/**
 * @module turn/side-task-types
 * The inputs and options every side task takes, read by the side-task module and its helpers.
 */

import type { $ZodType } from "zod/v4/core";
import type { ContentPart, JsonSchema, ReasoningEffort } from "../shapes/config.js";

/** The user turn of a side task: text, or content parts that may carry images. */
export type SideTaskInput = string | ContentPart[];

/** Options every side task takes. */
export interface SideTaskOptions {
  /** Told, in a sentence, why a side task came back empty and what negotiation latched. */
  onNotice?: ((message: string) => void) | undefined;
  /** Stops the call: it rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /**
   * Sampling temperature, sent while the model lets it be chosen.
   * @default 0.3
   */
  temperature?: number | undefined;
  /**
   * The reply ceiling; 0 sends none.
   * @default 512 for ask, askReply and askJson; 1024 for the summariser
   */
  maxTokens?: number | undefined;
  /**
   * A reasoning effort level ("low", "high" …) sent as `reasoning_effort`; absent or "off" sends
   * the no-thinking hints instead.
   */
  reasoningEffort?: ReasoningEffort | undefined;
  /** Fields merged into the body after the temperature; the endpoint may refuse any of them by name, and it is then dropped. */
  extraBody?: Record<string, unknown> | undefined;
}

/** Options of {@link askJson}. */
export interface AskJsonOptions extends SideTaskOptions {
  /**
   * The schema's name in `response_format` (letters, digits, `_` and `-`; anything else becomes `_`).
   * @default "answer"
   */
  name?: string | undefined;
  /**
   * Send the schema in OpenAI's strict mode: every property required (optional ones nullable) and
   * no additional properties. Turn it off for a looser schema that should stay as written.
   * @default true
   */
  strict?: boolean | undefined;
}

/** A schema {@link askJson} holds an answer to: a JSON Schema, or a zod 4 schema. */
export type SideTaskSchema = JsonSchema | $ZodType;

/** Options of {@link summariser}. */
export interface SummariserOptions extends SideTaskOptions {
  /** The system prompt the summary is written under. @default a prompt asking for goals, decisions, facts and open work */
  instructions?: string | undefined;
  /**
   * The most characters of one message the summary model is shown; a longer one keeps its start
   * and end around a marker.
   * @default 4000
   */
  maxMessageChars?: number | undefined;
}
