/**
 * @module testing/turns
 * Builds a scripted turn into the chunks a server family streams, or into the one
 * `chat.completion` object it answers a request that does not stream with.
 */
import { randomInt } from "node:crypto";
import { countChars4 } from "./render.js";
import type { Profile, StreamStyle } from "./profile-types.js";
import { callAsMarkup, carriedDeltas, carriedMessage, type ReasoningCarrier } from "./turn-carriers.js";

/** One tool call in a scripted turn. */
export interface ToolCallSpec {
  /** The function's name. */
  name: string;
  /** The arguments: a string is sent as written (so it may be broken JSON), an object as JSON. */
  arguments: string | Record<string, unknown>;
  /** The call's id. @default "call_<index>", or the family's random id (llama.cpp: 32 letters and digits) */
  id?: string | undefined;
}

/** An OpenAI usage object, or parts of one, merged over what the endpoint counted. */
export interface UsageOverride {
  prompt_tokens?: number | undefined;
  completion_tokens?: number | undefined;
  total_tokens?: number | undefined;
  prompt_tokens_details?: Record<string, unknown> | undefined;
  completion_tokens_details?: Record<string, unknown> | undefined;
  /** Shorthand for `prompt_tokens_details.cached_tokens`. */
  cached_tokens?: number | undefined;
  /** Shorthand for `completion_tokens_details.reasoning_tokens`. */
  reasoning_tokens?: number | undefined;
  [field: string]: unknown;
}

/** A turn to stream, described by what the model says rather than by chunks. */
export interface TurnSpec {
  /** The answer text. */
  content?: string | undefined;
  /** The scratchpad text, streamed in the family's reasoning field. */
  reasoning?: string | undefined;
  /** The field the scratchpad is streamed in. Defaults to the family's. */
  reasoningField?: "reasoning_content" | "reasoning" | undefined;
  /**
   * How the scratchpad travels: in the reasoning field, as content parts, or raw in the content
   * in one family's markup (see {@link ReasoningCarrier}). Defaults to the family's.
   */
  reasoningAs?: ReasoningCarrier | undefined;
  /**
   * Write the tool calls inside the reasoning as `<tool_call>` markup, with no `tool_calls` and
   * finish reason "stop", as a server does whose parser missed calls written in the thinking.
   * @default false
   */
  callsInReasoning?: boolean | undefined;
  /** Tool calls, streamed by index after the content. */
  toolCalls?: ToolCallSpec[] | undefined;
  /** The finish reason; null sends none. @default "tool_calls" with tool calls, else "stop" */
  finishReason?: string | null | undefined;
  /** Usage merged over the counted one, or false to send no usage at all. */
  usage?: UsageOverride | false | undefined;
  /** llama.cpp timings merged over the computed ones, or false to send none. Only sent by families that send timings, unless given. */
  timings?: Record<string, number> | false | undefined;
  /** How many deltas each text (content, reasoning, each call's arguments) is split into. @default 3 */
  pieces?: number | undefined;
  /** Whether to open with the content-free role chunk. Defaults to the family's habit. */
  roleChunk?: boolean | undefined;
}

/** What the endpoint counted for the request a turn answers. */
export interface UsageCounts {
  /** The prompt, in the configured unit. */
  prompt: number;
  /** The prefix shared with the previous request, where prefix caching is on. */
  cached: number | undefined;
}

/** The request-dependent inputs to building a turn. */
export interface TurnContext {
  model: string;
  includeUsage: boolean;
  usage: UsageCounts;
  /** The pause before each streamed chunk, where the stream is paced; the timings then say the time it takes. */
  delayMs?: number | undefined;
}

const CREATED = 1_700_000_000;

const ID_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Makes a run of random letters and digits, as llama-server's ids are. */
function randomLetters(length: number): string {
  let id = "";
  for (let index = 0; index < length; index += 1) id += ID_CHARACTERS[randomInt(ID_CHARACTERS.length)];
  return id;
}

/** The id of one completion in a family's style. */
function completionId(style: StreamStyle): string {
  return `${style.idPrefix}${style.randomIds ? randomLetters(style.randomIds) : "loopback"}`;
}

/** The ids of a turn's tool calls in a family's style, where the spec does not name them. */
function callIds(style: StreamStyle, calls: readonly ToolCallSpec[]): string[] {
  return calls.map((call, index) => call.id ?? (style.randomIds ? randomLetters(style.randomIds) : `call_${index}`));
}

/** Splits text into at most `count` pieces of near-equal length, never inside a surrogate pair. */
export function splitPieces(text: string, count: number): string[] {
  const points = Array.from(text);
  const n = Math.max(1, Math.min(Math.floor(count) || 1, points.length));
  if (points.length === 0) return [];
  const size = Math.ceil(points.length / n);
  const pieces: string[] = [];
  for (let i = 0; i < points.length; i += size) pieces.push(points.slice(i, i + size).join(""));
  return pieces;
}

function argumentsText(call: ToolCallSpec): string {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
}

function finishOf(spec: TurnSpec): string | null {
  if (spec.finishReason !== undefined) return spec.finishReason;
  return spec.toolCalls && spec.toolCalls.length > 0 && spec.callsInReasoning !== true ? "tool_calls" : "stop";
}

/** Builds the usage object a family reports for a turn, with the spec's overrides merged in. */
export function buildUsage(profile: Profile, spec: TurnSpec, counts: UsageCounts): Record<string, unknown> {
  const override = spec.usage === false ? {} : (spec.usage ?? {});
  const produced = (spec.content ?? "") + (spec.reasoning ?? "") + (spec.toolCalls ?? []).map(argumentsText).join("");
  const prompt = override.prompt_tokens ?? counts.prompt;
  const completion = override.completion_tokens ?? countChars4(produced);
  const usage: Record<string, unknown> = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: override.total_tokens ?? prompt + completion,
  };
  const cached = override.cached_tokens ?? counts.cached;
  if (cached !== undefined || profile.stream.cachedAlways) {
    usage.prompt_tokens_details = { cached_tokens: cached ?? 0, ...(profile.name === "openai" ? { audio_tokens: 0 } : {}) };
  }
  if (profile.name === "openai") {
    usage.completion_tokens_details = { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 };
  }
  if (profile.name === "openrouter") usage.cost = 0;
  if (override.reasoning_tokens !== undefined) {
    usage.completion_tokens_details = { ...(usage.completion_tokens_details as object), reasoning_tokens: override.reasoning_tokens };
  }
  if (override.prompt_tokens_details) usage.prompt_tokens_details = { ...(usage.prompt_tokens_details as object), ...override.prompt_tokens_details };
  if (override.completion_tokens_details) {
    usage.completion_tokens_details = { ...(usage.completion_tokens_details as object), ...override.completion_tokens_details };
  }
  for (const [key, value] of Object.entries(override)) {
    if (!(key in usage) && key !== "cached_tokens" && key !== "reasoning_tokens") usage[key] = value;
  }
  return usage;
}

/**
 * Builds llama.cpp's `timings` for a turn, or undefined where none are sent.
 *
 * Unpaced, the prompt takes 0.5 ms a token and the reply 20 ms a token. A paced stream (`paced`:
 * its chunk count and the pause before each) reports the time it takes instead: the first pause
 * as the prompt's, the rest as the reply's, so a run's decode time never passes its wall time.
 */
export function buildTimings(
  profile: Profile,
  spec: TurnSpec,
  usage: Record<string, unknown>,
  paced?: { chunks: number; delayMs: number },
): Record<string, number> | undefined {
  if (spec.timings === false) return undefined;
  if (!profile.stream.timings && spec.timings === undefined) return undefined;
  const prompt = Number(usage.prompt_tokens ?? 0);
  const details = usage.prompt_tokens_details as { cached_tokens?: number } | undefined;
  const cached = details?.cached_tokens ?? 0;
  const promptN = Math.max(0, prompt - cached);
  const predictedN = Number(usage.completion_tokens ?? 0);
  const pacing = paced !== undefined && paced.delayMs > 0 && paced.chunks > 0 ? paced : undefined;
  const promptMs = pacing ? pacing.delayMs : promptN * 0.5;
  const predictedMs = pacing ? (pacing.chunks - 1) * pacing.delayMs : predictedN * 20;
  return {
    cache_n: cached,
    prompt_n: promptN,
    prompt_ms: promptMs,
    prompt_per_token_ms: promptN > 0 ? promptMs / promptN : 0,
    prompt_per_second: promptN > 0 ? (promptN * 1000) / promptMs : 0,
    predicted_n: predictedN,
    predicted_ms: predictedMs,
    predicted_per_token_ms: predictedN > 0 ? predictedMs / predictedN : 0,
    predicted_per_second: predictedN > 0 && predictedMs > 0 ? (predictedN * 1000) / predictedMs : 0,
    ...(spec.timings ?? {}),
  };
}

/** The turn's reasoning and answer with the way they travel: the spec's choice, else the family's. */
function carried(spec: TurnSpec, style: StreamStyle) {
  let reasoning = spec.reasoning ?? "";
  if (spec.callsInReasoning && spec.toolCalls?.length) {
    const markup = spec.toolCalls.map((call) => callAsMarkup(call.name, argumentsText(call))).join("\n");
    reasoning = reasoning === "" ? markup : `${reasoning}\n${markup}`;
  }
  return {
    reasoning,
    content: spec.content ?? "",
    field: spec.reasoningField ?? style.reasoningField,
    carrier: spec.reasoningAs ?? style.reasoningAs ?? "field",
  };
}

/** Builds the chunks a family streams for a turn, ending before `data: [DONE]`. */
export function buildTurnChunks(profile: Profile, spec: TurnSpec, context: TurnContext): Array<Record<string, unknown> | string> {
  const style = profile.stream;
  const pieces = spec.pieces ?? 3;
  const base = {
    id: completionId(style),
    object: "chat.completion.chunk",
    created: CREATED,
    model: context.model,
    ...(style.fingerprint ? { system_fingerprint: style.fingerprint } : {}),
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> => ({
    ...base,
    choices: [
      {
        index: 0,
        delta: style.roleOnEveryChunk ? { role: "assistant", ...delta } : delta,
        ...(style.logprobs ? { logprobs: null } : {}),
        finish_reason: finish,
      },
    ],
  });
  const chunks: Array<Record<string, unknown> | string> = [...style.leadingComments];
  if (spec.roleChunk ?? style.roleChunk) {
    chunks.push(
      chunk(
        profile.name === "llama.cpp"
          ? { role: "assistant", content: null }
          : { role: "assistant", content: "", ...(profile.name === "openai" ? { refusal: null } : {}) },
      ),
    );
  }
  for (const delta of carriedDeltas(carried(spec, style), (text) => splitPieces(text, pieces))) chunks.push(chunk(delta));
  const calls = spec.callsInReasoning ? [] : (spec.toolCalls ?? []);
  const ids = callIds(style, calls);
  calls.forEach((call, position) => {
    const id = ids[position];
    const text = argumentsText(call);
    if (style.toolCallIndexes === "zero") {
      // Ollama: each call whole in one chunk, every one at index 0.
      chunks.push(chunk({ tool_calls: [{ index: 0, id, type: "function", function: { name: call.name, arguments: text } }] }));
      return;
    }
    const index = position;
    // llama.cpp's first delta of a call already carries the "{" its grammar opens the arguments with.
    const opening = style.argumentsOpen && text.startsWith("{") ? "{" : "";
    chunks.push(chunk({ tool_calls: [{ index, id, type: "function", function: { name: call.name, arguments: opening } }] }));
    for (const piece of splitPieces(text.slice(opening.length), pieces)) {
      chunks.push(chunk({ tool_calls: [{ index, ...(style.callIdOnEveryChunk ? { id } : {}), function: { arguments: piece } }] }));
    }
  });
  const last = chunk({}, finishOf(spec));
  chunks.push(last);
  const wanted = style.usageInStream === "always" || (style.usageInStream === "when-asked" && context.includeUsage);
  const sendUsage = spec.usage !== false && (wanted || spec.usage !== undefined);
  const usage = buildUsage(profile, spec, context.usage);
  // The chunks a paced stream sends, timings' own chunk included where usage gets one of its own.
  const sent = chunks.length + (sendUsage && !style.usageOnFinalChunk ? 1 : 0);
  const timings = buildTimings(profile, spec, usage, context.delayMs ? { chunks: sent, delayMs: context.delayMs } : undefined);
  if (sendUsage) {
    if (style.usageOnFinalChunk) last.usage = usage;
    else chunks.push({ ...base, choices: [], usage });
  }
  if (timings) {
    const tail = chunks[chunks.length - 1];
    if (tail && typeof tail === "object") tail.timings = timings;
  }
  return chunks;
}

/** Builds the `chat.completion` object a family answers a non-streamed request with. */
export function buildCompletion(profile: Profile, spec: TurnSpec, context: TurnContext): Record<string, unknown> {
  const message: Record<string, unknown> = {
    role: "assistant",
    ...carriedMessage(carried(spec, profile.stream), spec.toolCalls?.length && !spec.callsInReasoning ? null : ""),
  };
  if (spec.toolCalls?.length && !spec.callsInReasoning) {
    const ids = callIds(profile.stream, spec.toolCalls);
    message.tool_calls = spec.toolCalls.map((call, index) => ({
      id: ids[index],
      type: "function",
      function: { name: call.name, arguments: argumentsText(call) },
    }));
  }
  const usage = buildUsage(profile, spec, context.usage);
  const timings = buildTimings(profile, spec, usage);
  return {
    id: completionId(profile.stream),
    object: "chat.completion",
    created: CREATED,
    model: context.model,
    ...(profile.stream.fingerprint ? { system_fingerprint: profile.stream.fingerprint } : {}),
    choices: [{ index: 0, message, ...(profile.stream.logprobs ? { logprobs: null } : {}), finish_reason: finishOf(spec) }],
    ...(spec.usage === false ? {} : { usage }),
    ...(timings ? { timings } : {}),
  };
}

/**
 * Folds raw stream chunks into one `chat.completion` object, for a scripted stream answering a
 * request that does not stream.
 *
 * Content and reasoning deltas are joined, tool-call deltas are joined by index (a new id at an
 * index already holding a call starts another), and the last
 * finish reason and usage seen win. String chunks are skipped.
 */
export function foldChunks(chunks: ReadonlyArray<Record<string, unknown> | string>, model: string): Record<string, unknown> {
  let content = "";
  const reasoning: Record<string, string> = {};
  type Slot = { id?: string; type: string; function: { name: string; arguments: string } };
  const calls: Slot[] = [];
  const slots = new Map<number, Slot>();
  let finish: unknown = null;
  let usage: unknown;
  let timings: unknown;
  let id = "chatcmpl-loopback";
  for (const chunk of chunks) {
    if (typeof chunk === "string") continue;
    if (typeof chunk.id === "string") id = chunk.id;
    if (chunk.usage) usage = chunk.usage;
    if (chunk.timings) timings = chunk.timings;
    const choices = Array.isArray(chunk.choices) ? (chunk.choices as Array<Record<string, unknown>>) : [];
    for (const choice of choices) {
      if (choice.finish_reason) finish = choice.finish_reason;
      const delta = (choice.delta ?? {}) as Record<string, unknown>;
      if (typeof delta.content === "string") content += delta.content;
      for (const key of ["reasoning_content", "reasoning"]) {
        const value = delta[key];
        if (typeof value === "string") reasoning[key] = (reasoning[key] ?? "") + value;
      }
      const toolCalls = Array.isArray(delta.tool_calls) ? (delta.tool_calls as Array<Record<string, unknown>>) : [];
      for (const call of toolCalls) {
        const index = typeof call.index === "number" ? call.index : 0;
        const fn = (call.function ?? {}) as { name?: string; arguments?: string };
        const held = slots.get(index);
        // A new id at an index already holding a call is another call (Ollama puts them all at 0).
        const fresh = held === undefined || (typeof call.id === "string" && held.id !== undefined && call.id !== held.id);
        const slot = fresh ? { type: "function", function: { name: "", arguments: "" } } : held;
        if (fresh) {
          slots.set(index, slot);
          calls.push(slot);
        }
        if (typeof call.id === "string") slot.id = call.id;
        if (fn.name) slot.function.name += fn.name;
        if (fn.arguments) slot.function.arguments += fn.arguments;
      }
    }
  }
  const message: Record<string, unknown> = { role: "assistant", content, ...reasoning };
  if (calls.length > 0) message.tool_calls = calls;
  return {
    id,
    object: "chat.completion",
    created: CREATED,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
    ...(usage ? { usage } : {}),
    ...(timings ? { timings } : {}),
  };
}
