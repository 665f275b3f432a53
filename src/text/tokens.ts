/**
 * @module tokens
 * How big a request is, estimated: characters over a divisor.
 *
 * Four characters a token is right for English prose and deliberately low for JSON and tool
 * output, which pack closer to two or three; `calibration` learns the real divisor per model and
 * every function here takes it as `charsPerToken`.
 */

import type { ContentPart, Message, TextPart, ToolDefinition } from "../shapes/config.js";
import type { ContextBreakdown } from "../shapes/context.js";
import { positiveNumber } from "./guards.js";

export type { ContextBreakdown };

/** The divisor used until a model has reported its own. */
export const DEFAULT_CHARS_PER_TOKEN = 4;

/** What an image part is counted as, in tokens, since its URL says nothing about its cost. */
export const IMAGE_PART_TOKENS = 256;

/** Options shared by the estimators. */
export interface TokenOptions {
  /** Characters a token is worth on this model. @default 4 */
  charsPerToken?: number | undefined;
}

function divisor(options?: TokenOptions): number {
  return positiveNumber(options?.charsPerToken) ?? DEFAULT_CHARS_PER_TOKEN;
}

/**
 * Estimates the tokens in a text as its characters over four (or over `charsPerToken`), rounded up.
 *
 * @example
 * estimateTokens("hello world"); // 3
 */
export function estimateTokens(text: string, options?: TokenOptions): number {
  if (typeof text !== "string" || text.length === 0) return 0;
  return Math.ceil(text.length / divisor(options));
}

function partsChars(content: string | readonly (TextPart | ContentPart)[] | null | undefined): { chars: number; images: number } {
  if (typeof content === "string") return { chars: content.length, images: 0 };
  if (!Array.isArray(content)) return { chars: 0, images: 0 };
  let chars = 0;
  let images = 0;
  for (const part of content) {
    if (part && part.type === "text" && typeof part.text === "string") chars += part.text.length;
    else if (part && part.type === "image_url") images += 1;
  }
  return { chars, images };
}

/**
 * Counts the characters of one message that a server reads: its text, any reasoning sent back,
 * and each tool call's name and arguments. Image parts are not characters and count zero here.
 */
export function messageChars(message: Message): number {
  if (!message || typeof message !== "object") return 0;
  let chars = partsChars(message.content as string | TextPart[] | null | undefined).chars;
  if (message.role === "assistant") {
    if (typeof message.reasoning_content === "string") chars += message.reasoning_content.length;
    if (typeof message.reasoning === "string") chars += message.reasoning.length;
    for (const call of message.tool_calls ?? []) {
      chars += (call?.function?.name?.length ?? 0) + (call?.function?.arguments?.length ?? 0);
    }
  }
  return chars;
}

/** Estimates one message's tokens: its characters over the divisor, plus a flat count per image part. */
export function messageTokens(message: Message, options?: TokenOptions): number {
  if (!message || typeof message !== "object") return 0;
  const images = partsChars(message.content as string | ContentPart[] | null | undefined).images;
  return Math.ceil(messageChars(message) / divisor(options)) + images * IMAGE_PART_TOKENS;
}

/** Estimates the tokens a tool array costs as declared: its JSON over the divisor. */
export function toolTokens(tools: readonly ToolDefinition[] | undefined, options?: TokenOptions): number {
  if (!tools || tools.length === 0) return 0;
  let json = "";
  try {
    json = JSON.stringify(tools);
  } catch {
    json = "";
  }
  return estimateTokens(json, options);
}

/** The parts of a request body the estimators read. */
export interface RequestLike {
  messages: readonly Message[];
  tools?: readonly ToolDefinition[] | undefined;
}

/** Estimates a whole request's prompt: every message plus the declared tool schemas. */
export function requestTokens(body: RequestLike, options?: TokenOptions): number {
  return requestTokensOf(body, options);
}

/**
 * {@link requestTokens} with the tool block's JSON length already known (`toolChars`), or
 * measured here where absent. @internal
 */
export function requestTokensOf(body: RequestLike, options?: TokenOptions, toolChars?: number): number {
  let total = toolChars === undefined ? toolTokens(body?.tools, options) : tokensForChars(toolChars, options);
  for (const message of body?.messages ?? []) total += messageTokens(message, options);
  return total;
}

/** The tokens a tool block of `chars` JSON characters is estimated at, as {@link toolTokens} counts them. @internal */
export function tokensForChars(chars: number, options?: TokenOptions): number {
  return chars > 0 ? Math.ceil(chars / divisor(options)) : 0;
}

/** Options for {@link contextTokens}. */
export interface ContextTokenOptions extends TokenOptions {
  /**
   * The prompt tokens the endpoint reported for this request; the total becomes this and every
   * part a share of it. Anything that is not a number above zero is read as absent.
   */
  promptTokens?: number | undefined;
}

type Part = "system" | "tools" | "history" | "toolResults";

function partOf(message: Message): Exclude<Part, "tools"> {
  const role = (message as { role?: unknown } | null | undefined)?.role;
  if (role === "system" || role === "developer") return "system";
  if (role === "tool") return "toolResults";
  return "history";
}

function toolsJsonChars(tools: readonly ToolDefinition[] | undefined): number {
  if (!Array.isArray(tools) || tools.length === 0) return 0;
  try {
    return JSON.stringify(tools)?.length ?? 0;
  } catch {
    return 0;
  }
}

function imagesOf(message: Message): number {
  if (!message || typeof message !== "object") return 0;
  return partsChars(message.content as string | ContentPart[] | null | undefined).images;
}

/**
 * Counts the characters under each part of a request: system, tools, history and tool results.
 *
 * The same cut as {@link contextTokens}, exact rather than estimated: message characters as
 * {@link messageChars} counts them and the tool block as its JSON. Image parts count zero.
 */
export function contextChars(body: RequestLike): ContextBreakdown {
  return contextCharsOf(body);
}

function contextCharsOf(body: RequestLike, toolChars?: number): ContextBreakdown {
  const result: ContextBreakdown = { system: 0, tools: toolChars ?? toolsJsonChars(body?.tools), history: 0, toolResults: 0, total: 0 };
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  for (const message of messages) result[partOf(message)] += messageChars(message);
  result.total = result.system + result.tools + result.history + result.toolResults;
  return result;
}

const PARTS: readonly Part[] = ["system", "tools", "history", "toolResults"];

/**
 * Cuts a request's prompt into system, tools, history and tool results, parts that add up to the total.
 *
 * Without `promptTokens` the total is {@link requestTokens} and each part is the sum of the same
 * per-message estimates, the tool block exactly as {@link toolTokens} counts it. With
 * `promptTokens` the total is that count and each part a share of it, weighted by the estimate;
 * the largest part takes the rounding so the four sum exactly. A request with nothing in it puts
 * a reported count under history.
 *
 * @example
 * const { system, tools, history, toolResults, total } = contextTokens(body, { promptTokens: 5120 });
 */
export function contextTokens(body: RequestLike, options?: ContextTokenOptions): ContextBreakdown {
  // An array's JSON is written once for both counts; anything else is read as each count always read it.
  return contextTokensOf(body, options, Array.isArray(body?.tools) ? toolsJsonChars(body.tools) : undefined);
}

/**
 * {@link contextTokens} with the tool block's JSON length already known (`toolChars`), or
 * measured here where absent. @internal
 */
export function contextTokensOf(body: RequestLike, options?: ContextTokenOptions, toolChars?: number): ContextBreakdown {
  const tools = toolChars === undefined ? toolTokens(body?.tools, options) : tokensForChars(toolChars, options);
  const estimated: ContextBreakdown = { system: 0, tools, history: 0, toolResults: 0, total: 0 };
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  for (const message of messages) estimated[partOf(message)] += messageTokens(message, options);
  estimated.total = estimated.system + estimated.tools + estimated.history + estimated.toolResults;
  const reported = options?.promptTokens;
  if (typeof reported !== "number" || !Number.isFinite(reported) || reported <= 0) return estimated;
  const total = Math.round(reported);
  // Weights are the unrounded estimates, so a part is never inflated by per-message rounding.
  const chars = contextCharsOf(body, toolChars);
  const scale = divisor(options);
  const weights: Record<Part, number> = {
    system: chars.system / scale,
    tools: chars.tools / scale,
    history: chars.history / scale,
    toolResults: chars.toolResults / scale,
  };
  for (const message of messages) weights[partOf(message)] += imagesOf(message) * IMAGE_PART_TOKENS;
  const sum = weights.system + weights.tools + weights.history + weights.toolResults;
  const shared: ContextBreakdown = { system: 0, tools: 0, history: 0, toolResults: 0, total };
  if (!(sum > 0)) {
    shared.history = total;
    return shared;
  }
  let largest: Part = "history";
  for (const part of PARTS) if (weights[part] > weights[largest]) largest = part;
  let given = 0;
  for (const part of PARTS) {
    if (part === largest) continue;
    shared[part] = Math.floor((total * weights[part]) / sum);
    given += shared[part];
  }
  shared[largest] = total - given;
  return shared;
}
