/**
 * @module turn/side-task-request
 * One side-task request: its body, rebuilt from the latches on every attempt, sent without
 * streaming through negotiate, and the reply read back as text and a finish reason.
 *
 * The public side tasks (ask, askReply, askJson, the summariser) and preselect all go through
 * {@link sendSideTask}, so the defaults, the no-thinking hints and the extraBody rules live here
 * once. What every side task does around its request lives here too: checking the input,
 * building the request from the options ({@link requestFor}), and turning a failure other than a
 * stop into a notice ({@link guarded}). A side task that cannot run says why through the
 * options' onNotice, or, where none is given, once per runtime as a process warning
 * ({@link sideNotice}), so a misconfiguration is never silent.
 */

import { capabilitiesForIn, effortFor, type EndpointCapabilities, type ModelCapabilities } from "../wire/capabilities.js";
import { negotiate } from "../wire/negotiate.js";
import { checkBaseUrl, getClientIn, quoteGiven } from "../wire/client.js";
import type { Endpoint, FinishReason, ReasoningEffort } from "../shapes/config.js";
import { errorMessage } from "../text/errors.js";
import type { SideTaskInput, SideTaskOptions } from "./side-task-types.js";
import { ALL_FENCES, stripThinking } from "../text/thinking.js";
import { defineSlot, slotOf, type RuntimeState } from "../state/state.js";
import { finiteNumber, isPlainRecord, positiveInteger } from "../text/guards.js";
import { notify } from "../text/safe-calls.js";
import { contentText } from "../text/content-text.js";
import { applyCombinations } from "../wire/refusal-combination.js";
import { streamedError } from "../text/error-body.js";
import { StreamErrorEvent } from "../wire/stream.js";

/** The temperature a side task is sent when nothing states one. */
export const SIDE_TASK_TEMPERATURE = 0.3;

/** The reply ceilings a side task takes when nothing states one, by kind. */
export const SIDE_TASK_CEILINGS = Object.freeze({ ask: 512, summariser: 1024, preselect: 256 });

/**
 * The fields a side task sends to keep a thinking model from deliberating, unless a reasoning
 * effort level is asked for.
 *
 * `chat_template_kwargs.enable_thinking = false` is the switch the Qwen3 family's chat template
 * reads (and GLM's, and others copied from it). vLLM and SGLang hand `chat_template_kwargs` to the
 * template per request, and so does llama.cpp's server (tools/server/server-common.cpp, see
 * ngxson/wllama#240); a template that does not read the flag ignores it, and Ollama, LM Studio and
 * OpenRouter ignore a field they do not know. OpenAI refuses it by name ("Unrecognized request
 * argument supplied"), which is why it is offered to negotiate as droppable: latched off for that
 * model after one refusal. `reasoning_effort: "none"` is deliberately not among them: hosted
 * models validate its value (and negotiate would answer a refused "none" by asking for more
 * effort), so it is sent only where a task asks for it.
 */
export const NO_THINKING_HINTS: Readonly<Record<string, unknown>> = Object.freeze({
  chat_template_kwargs: Object.freeze({ enable_thinking: false }),
});

/** Fields a side task owns, which an extraBody cannot replace. */
const OWNED: ReadonlySet<string> = new Set(["model", "messages", "stream", "stream_options", "tools", "tool_choice"]);

/** What one side-task request is made of, before the latches are read. */
export interface SideTaskRequest {
  /** Where the request goes. */
  endpoint: Endpoint;
  /** The model's name as the endpoint knows it. */
  model: string;
  /** The messages sent: a system prompt (where there is one) and the user turn. */
  messages: unknown[];
  /** The temperature, already defaulted; a non-number sends none. */
  temperature: number | undefined;
  /** The reply ceiling, already defaulted; zero or less sends none. */
  maxTokens: number | undefined;
  /** A reasoning effort level; absent or "off" sends the no-thinking hints instead. */
  reasoningEffort?: ReasoningEffort | undefined;
  /** Fields merged in last and offered to negotiate as droppable. */
  extraBody?: Record<string, unknown> | undefined;
  /** Builds the `response_format` for an attempt from the records; undefined sends none. */
  responseFormat?: ((supports: EndpointCapabilities, model: ModelCapabilities | undefined) => Record<string, unknown> | undefined) | undefined;
  /** Stops the request. */
  signal?: AbortSignal | undefined;
  /** Told each latch negotiate flips. */
  onNotice?: ((message: string) => void) | undefined;
}

/** What a side task's reply said. */
export interface SideTaskAnswer {
  /** The answer text, fenced reasoning taken out, trimmed. */
  text: string;
  /** The choice's finish reason as the server sent it; undefined where it sent none. */
  finishReason: FinishReason | undefined;
  /** The model's own refusal to answer (OpenAI's `message.refusal`), where it sent one. */
  refusal?: string | undefined;
}

/** The level asked for, or "" where the no-thinking hints apply. */
export function effortLevel(asked: unknown): string {
  if (typeof asked !== "string") return "";
  const value = asked.trim();
  return value === "" || value.toLowerCase() === "off" ? "" : value;
}

/** Whether a latch says this field is not to be sent to this model. */
function latchedOff(field: string, model: ModelCapabilities | undefined): boolean {
  if (model?.droppedFields?.includes(field)) return true;
  switch (field) {
    case "temperature":
      return model?.chosenTemperature === false;
    case "reasoning_effort":
      return model?.reasoningEffort === false;
    case "max_tokens":
      return model?.legacyTokenLimit === false;
    case "response_format":
      return model?.structuredOutput === false;
    default:
      return false;
  }
}

/** The fields negotiate may drop for this request: the hints (where sent) and the extraBody keys. */
export function droppableFields(request: Pick<SideTaskRequest, "reasoningEffort" | "extraBody">): string[] {
  const fields = new Set<string>();
  if (effortLevel(request.reasoningEffort) === "") for (const field of Object.keys(NO_THINKING_HINTS)) fields.add(field);
  if (isPlainRecord(request.extraBody)) for (const field of Object.keys(request.extraBody)) if (!OWNED.has(field)) fields.add(field);
  return [...fields];
}

/**
 * Builds one attempt's body from the request and the latest records: the ceiling in the
 * spelling the model takes, the temperature while it is ours to choose, the effort or the
 * no-thinking hints, the response format while the model takes one, then the extraBody.
 */
export function buildSideTaskBody(request: SideTaskRequest, supports: EndpointCapabilities, model: ModelCapabilities | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model, messages: request.messages };
  const ceiling = positiveInteger(request.maxTokens);
  if (ceiling !== undefined) {
    if (model?.legacyTokenLimit === false) body.max_completion_tokens = ceiling;
    else body.max_tokens = ceiling;
  }
  if (model?.chosenTemperature !== false && typeof request.temperature === "number" && Number.isFinite(request.temperature)) {
    body.temperature = request.temperature;
  }
  const level = effortLevel(request.reasoningEffort);
  if (level !== "") {
    const effort = model ? effortFor(model, level) : level;
    if (effort !== "") body.reasoning_effort = effort;
  } else {
    for (const [field, value] of Object.entries(NO_THINKING_HINTS)) if (!latchedOff(field, model)) body[field] = value;
  }
  if (model?.structuredOutput !== false) {
    const format = request.responseFormat?.(supports, model);
    if (format !== undefined) body.response_format = format;
  }
  if (isPlainRecord(request.extraBody)) {
    for (const [field, value] of Object.entries(request.extraBody)) {
      if (OWNED.has(field) || value === undefined || latchedOff(field, model)) continue;
      body[field] = value;
    }
  }
  for (const field of model?.droppedFields ?? []) if (!OWNED.has(field)) delete body[field];
  // A side task declares no tools: what the model refused only without them is left out, and
  // what it refused only beside them (an effort) is still sent.
  applyCombinations(body, model);
  return body;
}

/**
 * Reads a chat completion that did not stream into an answer; throws where it holds no choice,
 * and a {@link StreamErrorEvent} where the 200 body carries an error (beside its choices, as
 * OpenRouter sends an upstream failure, or as a choice finishing with `"error"`).
 */
export function readCompletion(completion: unknown): SideTaskAnswer {
  const failure = isPlainRecord(completion) ? streamedError(completion) : undefined;
  const choices = isPlainRecord(completion) ? completion.choices : undefined;
  const choice = Array.isArray(choices) ? choices[0] : undefined;
  const failed =
    failure ??
    (isPlainRecord(choice) && choice.finish_reason === "error"
      ? (choice.error ?? { message: 'The server ended the reply with finish_reason "error".' })
      : undefined);
  if (failed !== undefined) throw new StreamErrorEvent(isPlainRecord(failed) ? failed : { message: String(failed) }, { produced: false, events: 0 });
  if (!isPlainRecord(choice)) throw new TypeError("The endpoint answered without a choice.");
  const message = isPlainRecord(choice.message) ? choice.message : {};
  const text = stripThinking(contentText(message.content), ALL_FENCES).content.trim();
  const finish = choice.finish_reason;
  const answer: SideTaskAnswer = { text, finishReason: typeof finish === "string" && finish !== "" ? finish : undefined };
  if (typeof message.refusal === "string" && message.refusal.trim() !== "") answer.refusal = message.refusal.trim();
  return answer;
}

/**
 * Sends a side-task request without streaming, negotiating what the endpoint or the model
 * refuses, and reads the reply; rejects with whatever the request could not get past.
 */
export async function sendSideTask(state: RuntimeState, request: SideTaskRequest): Promise<SideTaskAnswer> {
  const client = getClientIn(state, request.endpoint);
  const supports = capabilitiesForIn(state, request.endpoint.baseUrl, request.endpoint.apiKey);
  let sent: Record<string, unknown> | undefined;
  const completion = await negotiate(
    supports,
    async (records, _produced, model) => {
      sent = buildSideTaskBody(request, records, model);
      return client.chat.completions.create(sent as never, request.signal ? { signal: request.signal } : undefined) as Promise<unknown>;
    },
    {
      ...(request.model ? { model: request.model } : {}),
      droppable: droppableFields(request),
      ...(request.onNotice ? { onNotice: request.onNotice } : {}),
      sentBody: () => sent,
    },
  );
  return readCompletion(completion);
}

/** The options object itself, or an empty one for anything that is not an object. */
export function settingsOf<T extends object>(options: T | undefined): Partial<T> {
  return isPlainRecord(options) ? options : {};
}

/** Why a reply came back with no text, in words. */
export function emptyReason(finishReason: string | undefined, refusal?: string): string {
  if (refusal) return `the model declined (${refusal})`;
  if (finishReason === "length") return "its reply ran into the token ceiling before any answer, perhaps spent on reasoning";
  return "its reply was empty";
}

/** A short name for the side task in notices. */
export function taskName(model: string): string {
  return model ? `The side task on ${model}` : "The side task";
}

/** Whether this runtime has already warned of a side-task notice nobody listened for. */
const UNHEARD = defineSlot("side-task-unheard", () => ({ warned: false }));

/**
 * Says a side-task notice: to onNotice where it is a function; otherwise, the first time in this
 * runtime, as a process warning (`AgentCoreNotice`) that says how to hear the rest.
 */
export function sideNotice(state: RuntimeState, onNotice: unknown, message: string): void {
  if (typeof onNotice === "function") return notify(onNotice, message);
  const unheard = slotOf(state, UNHEARD);
  if (unheard.warned) return;
  unheard.warned = true;
  process.emitWarning(`${message} (Pass onNotice to a side task to hear every notice; this is said once per runtime.)`, "AgentCoreNotice");
}

/** Why a side task cannot be sent, naming the field and what was given; undefined where it can. */
export function unsendable(endpoint: Endpoint, model: unknown, input: unknown): string | undefined {
  try {
    checkBaseUrl((endpoint as Partial<Endpoint> | undefined)?.baseUrl);
  } catch (error) {
    return errorMessage(error).replace(/\.$/, "");
  }
  if (typeof model !== "string" || model.trim() === "") return `its model must be a non-empty string; given ${quoteGiven(model)}`;
  if (!validInput(input)) return `its input must be a string or an array of content parts; given ${quoteGiven(input)}`;
  return undefined;
}

/** Whether a side task's input is a string or an array of content parts. */
export function validInput(input: unknown): input is SideTaskInput {
  return typeof input === "string" || (Array.isArray(input) && input.every((part) => isPlainRecord(part) && typeof part.type === "string"));
}

/** The request a side task sends, with the defaults applied. */
export function requestFor(
  endpoint: Endpoint,
  model: string,
  system: string,
  input: SideTaskInput,
  options: SideTaskOptions,
  ceiling: number,
): SideTaskRequest {
  const messages: unknown[] = [];
  if (typeof system === "string" && system.trim() !== "") messages.push({ role: "system", content: system });
  messages.push({ role: "user", content: input });
  return {
    endpoint,
    model: typeof model === "string" ? model : "",
    messages,
    temperature: finiteNumber(options.temperature) ?? SIDE_TASK_TEMPERATURE,
    maxTokens: finiteNumber(options.maxTokens) ?? ceiling,
    reasoningEffort: options.reasoningEffort,
    extraBody: isPlainRecord(options.extraBody) ? options.extraBody : undefined,
    signal: options.signal,
    onNotice: options.onNotice,
  };
}

/**
 * Runs a side task's request: a stop rejects with the signal's reason, any other failure is told
 * ({@link sideNotice}) and answered undefined.
 */
export async function guarded<T>(state: RuntimeState, options: SideTaskOptions, model: string, work: () => Promise<T>): Promise<T | undefined> {
  const signal = options.signal;
  if (signal?.aborted) throw signal.reason;
  try {
    return await work();
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    sideNotice(state, options.onNotice, `${taskName(model)} failed and has no answer: ${errorMessage(error)}`);
    return undefined;
  }
}
