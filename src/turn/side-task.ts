/**
 * @module side-task
 * One-shot calls that help a run without being one: a short prompt, a short answer, no tools.
 *
 * {@link ask} returns the answer text, {@link askReply} the text with the finish reason, and
 * {@link askJson} an answer held to a schema (JSON Schema or zod 4). {@link summariser} makes the
 * function compaction folds a transcript with, and {@link taskCall} turns a task's settings from
 * an agent document into the arguments these take. A side task never rejects for a failure: a
 * timeout, a refusal or an answer that cannot be read comes back as undefined (or an empty
 * summary) with a notice saying why. The one exception is a stop: when the caller's signal
 * aborts, the call rejects with the signal's reason, so a stopped run is told apart the usual way.
 *
 * Side tasks do not stream. They negotiate what the endpoint or the model refuses the way a turn
 * does, rebuilding the body from the latches on every attempt, and they share those latches (and
 * the pooled client) with the run, through the runtime state.
 */

import type { $ZodType, output } from "zod/v4/core";
import type { Endpoint, FinishReason, JsonSchema, Message } from "../shapes/config.js";
import { defaultState, type RuntimeState } from "../state/state.js";
import { askJsonIn, readJson } from "./side-task-json.js";
import { emptyReason, guarded, requestFor, SIDE_TASK_CEILINGS, sendSideTask, settingsOf, sideNotice, taskName, unsendable } from "./side-task-request.js";
import { renderTranscript, summaryPrompt, SUMMARY_INSTRUCTIONS } from "./side-task-summary.js";
import { finiteNumber } from "../text/guards.js";
import { notify } from "../text/safe-calls.js";
import type { AskJsonOptions, SideTaskInput, SideTaskOptions, SideTaskSchema, SummariserOptions } from "./side-task-types.js";

export { askJsonIn } from "./side-task-json.js";
export type { AskJsonOptions, SideTaskInput, SideTaskOptions, SideTaskSchema, SummariserOptions } from "./side-task-types.js";
export { taskCall, type TaskCall, type TaskCallOptions } from "./side-task-call.js";

/** What {@link askReply} returns: the answer and whether it finished. */
export interface SideTaskReply {
  /** The answer, fenced reasoning taken out, trimmed. */
  text: string;
  /** The choice's finish reason as the server sent it ("length" for a cut-off reply); undefined where it sent none. */
  finishReason: FinishReason | undefined;
}

/**
 * The function compaction calls to write a summary: the messages folded and the earlier summary
 * they continue.
 */
export type SideTaskSummariser = (messages: Message[], options: { previous?: string; signal?: AbortSignal }) => Promise<string>;

/**
 * Asks for a reply and its finish reason, from `state`.
 *
 * @internal
 */
export async function askReplyIn(
  state: RuntimeState,
  endpoint: Endpoint,
  model: string,
  system: string,
  input: SideTaskInput,
  options: SideTaskOptions = {},
): Promise<SideTaskReply | undefined> {
  const settings = settingsOf(options);
  const problem = unsendable(endpoint, model, input);
  if (problem !== undefined) {
    sideNotice(state, settings.onNotice, `${taskName(model)} was not sent: ${problem}.`);
    return undefined;
  }
  const answer = await guarded(state, settings, model, () => sendSideTask(state, requestFor(endpoint, model, system, input, settings, SIDE_TASK_CEILINGS.ask)));
  return answer ? { text: answer.text, finishReason: answer.finishReason } : undefined;
}

/**
 * Asks a model for a short reply and returns it with the finish reason the server sent, so a
 * reply cut off at the ceiling can be told from one that finished.
 *
 * Takes the same arguments as {@link ask}. `finishReason` is "length" for a reply that ran into
 * `maxTokens` and undefined where the server sent none; a cut-off reply is returned, not thrown,
 * since only the caller knows whether a partial reply is any use. Undefined, with a notice, where
 * the request failed; a stop rejects with the signal's reason.
 *
 * @param endpoint - Where to send it, with the key and request timeout.
 * @param model - The model's name as the endpoint knows it.
 * @param system - The system prompt; empty sends none.
 * @param input - The user turn: a string, or content parts (an image goes as an `image_url` part).
 * @param options - Notices, the stop signal, temperature, ceiling, reasoning effort and extraBody.
 * @example
 * ```ts
 * const reply = await askReply(config, visionModel, "You are an OCR engine.", page);
 * if (reply?.finishReason === FinishReason.Length) {
 *   // cut off: retry with a higher ceiling, or keep what is there
 * }
 * ```
 */
export function askReply(
  endpoint: Endpoint,
  model: string,
  system: string,
  input: SideTaskInput,
  options?: SideTaskOptions,
): Promise<SideTaskReply | undefined> {
  return askReplyIn(defaultState, endpoint, model, system, input, options);
}

/**
 * Asks for a reply's text, from `state`.
 *
 * @internal
 */
export async function askIn(
  state: RuntimeState,
  endpoint: Endpoint,
  model: string,
  system: string,
  input: SideTaskInput,
  options: SideTaskOptions = {},
): Promise<string | undefined> {
  const reply = await askReplyIn(state, endpoint, model, system, input, options);
  if (reply === undefined || reply.text !== "") return reply?.text;
  notify(settingsOf(options).onNotice, `${taskName(model)} has no answer: ${emptyReason(reply.finishReason)}.`);
  return undefined;
}

/**
 * Asks a model one short question and returns the answer text, or undefined where no answer came.
 *
 * The request does not stream and declares no tools. It is sent at temperature 0.3 with a ceiling
 * of 512 tokens unless the options say otherwise (`maxTokens: 0` sends none), with the
 * no-thinking hints unless a reasoning effort level is asked for, and with `extraBody` merged in
 * last. What the endpoint or the model refuses is negotiated away and latched, as for a turn.
 * Fenced reasoning is taken out of the answer. A timeout (the endpoint's `requestTimeoutSeconds`),
 * a refusal, an unreachable server or a reply with no answer text in it gives undefined and a
 * notice; a stop rejects with the signal's reason. Use {@link askReply} to tell a cut-off answer
 * from a finished one, and to see an empty reply as it came.
 *
 * @param endpoint - Where to send it, with the key and request timeout.
 * @param model - The model's name as the endpoint knows it.
 * @param system - The system prompt; empty sends none.
 * @param input - The user turn: a string, or content parts (an image goes as an `image_url` part).
 * @param options - Notices, the stop signal, temperature, ceiling, reasoning effort and extraBody.
 * @example
 * ```ts
 * const title = await ask(config, small, "Name this chat in five words.", firstMessage, { onNotice });
 * ```
 */
export function ask(endpoint: Endpoint, model: string, system: string, input: SideTaskInput, options?: SideTaskOptions): Promise<string | undefined> {
  return askIn(defaultState, endpoint, model, system, input, options);
}

/**
 * Asks a model for an answer with a shape and returns it parsed, or undefined where no usable
 * JSON came back.
 *
 * The schema goes out as a json_schema `response_format`, so the server constrains the reply to
 * it (a grammar on llama.cpp, guided decoding on vLLM, structured output on LM Studio, Ollama and
 * OpenAI). It is rewritten the same way tool parameters are: the strict form marked
 * `strict: true` by default, or the grammar-safe form with `strict: false` and once the endpoint
 * failed to build a grammar from the strict one. The schema is also written into the system
 * prompt, and the reply is read with {@link parseJson} whether or not the server held it to the
 * schema. A model that refuses `response_format` is latched off for that endpoint and model, and
 * later calls rely on the prompt alone; a schema the server rejects as invalid is not latched,
 * and the call answers undefined with the server's words in the notice.
 *
 * A zod 4 schema is converted with zod's own `toJSONSchema` (its input side, since that is what
 * the model writes), and the answer is checked and typed by it; null-valued properties, which
 * strict mode sends for optional ones, are left out where that makes the answer pass. An answer to
 * a JSON Schema is returned as parsed, not checked. A reply that stops before its JSON is complete
 * is undefined.
 * Defaults and failures are as {@link ask}'s.
 *
 * @param endpoint - Where to send it, with the key and request timeout.
 * @param model - The model's name as the endpoint knows it.
 * @param system - The system prompt; the schema is added after it.
 * @param input - The user turn: a string, or content parts.
 * @param schema - A JSON Schema, or a zod 4 schema.
 * @param options - The schema's name, strict, and everything {@link ask} takes.
 * @example
 * ```ts
 * const picked = await askJson<{ tools: string[] }>(config, small, system, request, PRESELECT_SCHEMA, {
 *   name: "preselection",
 *   onNotice,
 * }); // undefined when no JSON came back
 * ```
 */
export function askJson<S extends $ZodType>(
  endpoint: Endpoint,
  model: string,
  system: string,
  input: SideTaskInput,
  schema: S,
  options?: AskJsonOptions,
): Promise<output<S> | undefined>;
export function askJson<T = unknown>(
  endpoint: Endpoint,
  model: string,
  system: string,
  input: SideTaskInput,
  schema: JsonSchema,
  options?: AskJsonOptions,
): Promise<T | undefined>;
export function askJson(
  endpoint: Endpoint,
  model: string,
  system: string,
  input: SideTaskInput,
  schema: SideTaskSchema,
  options?: AskJsonOptions,
): Promise<unknown> {
  return askJsonIn(defaultState, endpoint, model, system, input, schema, options);
}

/**
 * Reads the JSON value in a model's reply, or undefined where there is none.
 *
 * Fenced reasoning (`<think>` and the rest of ALL_FENCES) is taken out first. The value may be
 * the whole reply, sit in a ``` fence or in prose, and may carry the slips a local model makes:
 * single quotes, `True`/`False`/`None`, bare keys, trailing commas, comments. A reply cut off
 * before its JSON is complete is undefined, and so is a value found inside a bracket the reply never
 * closed, since that is a fragment of the answer. Never throws.
 *
 * @param text - The reply's text.
 * @example
 * ```ts
 * parseJson("Sure: {'tools': ['read_file',], done: True}"); // { tools: ["read_file"], done: true }
 * ```
 */
export function parseJson<T = unknown>(text: string): T | undefined {
  try {
    return readJson(text) as T | undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes a summariser on `state`.
 *
 * @internal
 */
export function summariserIn(state: RuntimeState, endpoint: Endpoint, model: string, options: SummariserOptions = {}): SideTaskSummariser {
  const settings = { ...settingsOf(options) };
  return async (messages, call = {}) => {
    const signals = [settings.signal, call?.signal].filter((signal): signal is AbortSignal => signal instanceof AbortSignal);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const transcript = renderTranscript(Array.isArray(messages) ? messages : [], finiteNumber(settings.maxMessageChars) ?? 4000);
    if (transcript === "") return "";
    const instructions = typeof settings.instructions === "string" && settings.instructions.trim() !== "" ? settings.instructions : SUMMARY_INSTRUCTIONS;
    const previous = typeof call?.previous === "string" && call.previous.trim() !== "" ? call.previous : undefined;
    const reply = await askReplyIn(state, endpoint, model, instructions, summaryPrompt(transcript, previous), {
      ...settings,
      ...(signal ? { signal } : {}),
      maxTokens: finiteNumber(settings.maxTokens) ?? SIDE_TASK_CEILINGS.summariser,
    });
    if (!reply) return "";
    if (reply.finishReason === "length" && reply.text !== "") {
      notify(settings.onNotice, `${taskName(model)} wrote a summary that ran into its token ceiling; it is kept as it stands.`);
    }
    return reply.text;
  };
}

/**
 * Makes the function compaction writes its summaries with, asking `model` on `endpoint`.
 *
 * The function renders the folded messages as a plain transcript (each message cut to
 * `maxMessageChars`, images named rather than sent, tool calls shown with their arguments), hands
 * the earlier summary in for the new one to take in, and returns the summary text. It is a side
 * task like {@link ask}, at a ceiling of 1024 tokens unless told otherwise. Where the request
 * fails it returns "" with a notice, which compaction reads as no fold; a stop, by the factory's
 * signal or the call's, rejects with the signal's reason.
 *
 * @param endpoint - Where to send it, with the key and request timeout.
 * @param model - The model's name as the endpoint knows it.
 * @param options - The prompt, the per-message cut, and everything {@link ask} takes.
 * @example
 * ```ts
 * const fold = await runCompaction(messages, plan, summariser(config, small, { onNotice }));
 * ```
 */
export function summariser(endpoint: Endpoint, model: string, options?: SummariserOptions): SideTaskSummariser {
  return summariserIn(defaultState, endpoint, model, options);
}
