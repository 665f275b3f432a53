/**
 * @module tokens
 * How big a request is, estimated: characters over a divisor.
 *
 * Four characters a token is right for English prose and deliberately low for JSON and tool
 * output, which pack closer to two or three; `calibration` learns the real divisor per model and
 * every function here takes it as `charsPerToken`.
 */

import type { ContentPart, Message, TextPart, ToolDefinition } from "./config.js";

/** The divisor used until a model has reported its own. */
export const DEFAULT_CHARS_PER_TOKEN = 4;

/** What an image part is counted as, in tokens, since its URL says nothing about its cost. */
export const IMAGE_PART_TOKENS = 256;

/** Options shared by the estimators. */
export interface TokenOptions {
  /** Characters a token is worth on this model. @default 4 */
  charsPerToken?: number;
}

function divisor(options?: TokenOptions): number {
  const value = options?.charsPerToken;
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : DEFAULT_CHARS_PER_TOKEN;
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
  tools?: readonly ToolDefinition[];
}

/** Estimates a whole request's prompt: every message plus the declared tool schemas. */
export function requestTokens(body: RequestLike, options?: TokenOptions): number {
  let total = toolTokens(body?.tools, options);
  for (const message of body?.messages ?? []) total += messageTokens(message, options);
  return total;
}
