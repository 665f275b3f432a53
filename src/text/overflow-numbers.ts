/**
 * @module text/overflow-numbers
 * The window and the request size an endpoint's overflow refusal names, read out of its body
 * fields or its sentence.
 *
 * llama.cpp puts them in the error object (`n_ctx`, `n_prompt_tokens`); OpenAI, vLLM,
 * OpenRouter, LM Studio, Moonshot, Hugging Face TGI, DashScope, SiliconFlow and Gemini put them
 * in the message, each in its own words. Every reading here is taken from one of the wordings in
 * `./testing`'s samples and profiles.
 */

import { describeError } from "./error-body.js";
import { isRecord } from "./guards.js";

/** What an overflow refusal says about the window and the request, where it says it. */
export interface OverflowNumbers {
  /** The window the endpoint weighed the request against, in tokens. */
  limit?: number;
  /** What the endpoint counted the request at (the prompt, plus the reply ceiling where it added one), in tokens. */
  requested?: number;
}

/** A count as a sentence writes it: digits, maybe grouped with commas. */
const N = String.raw`(\d{1,3}(?:,\d{3})+|\d+)`;

/** One sentence and how its numbers read: which group is the window, which groups add up to the request. */
interface Reading {
  pattern: RegExp;
  limit?: number;
  requested?: readonly number[];
}

const READINGS: readonly Reading[] = [
  // llama.cpp: "request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it".
  { pattern: new RegExp(String.raw`request \(${N} tokens\) exceeds the available context size \(${N} tokens\)`, "i"), requested: [1], limit: 2 },
  // vLLM, a ceiling that does not fit: "… maximum context length is 4096 tokens and your request has 3000 input tokens (2000 > 4096 - 3000)".
  {
    pattern: new RegExp(String.raw`maximum context length is ${N} tokens and your request has ${N} input tokens \(${N} >`, "i"),
    limit: 1,
    requested: [2, 3],
  },
  // OpenAI, vLLM, OpenRouter: "maximum context length is 128000 tokens. However, your messages resulted in 202868 tokens",
  // "… However, you requested 19591 tokens", "… However, you requested about 92208 tokens", "… However, your request has 5000 input tokens".
  {
    pattern: new RegExp(
      String.raw`maximum context length is ${N} tokens\.?\s*However, (?:your messages resulted in|you requested(?: about)?|your request has) ${N}(?: input)? tokens`,
      "i",
    ),
    limit: 1,
    requested: [2],
  },
  { pattern: new RegExp(String.raw`maximum context length is ${N} tokens`, "i"), limit: 1 },
  // LM Studio: "Trying to keep the first 14538 tokens when context the overflows. However, the model is loaded with context length of only 2048 tokens".
  { pattern: new RegExp(String.raw`keep the first ${N} tokens when context the overflows`, "i"), requested: [1] },
  { pattern: new RegExp(String.raw`loaded with (?:a )?context length of only ${N} tokens`, "i"), limit: 1 },
  // Moonshot: "exceeded model token limit: 262144 (requested: 269030)", "model max length exceeded, max length:8192".
  { pattern: new RegExp(String.raw`exceeded model token limit: ${N} \(requested: ${N}\)`, "i"), limit: 1, requested: [2] },
  { pattern: new RegExp(String.raw`model max length exceeded, max length:\s*${N}`, "i"), limit: 1 },
  // Hugging Face TGI: "`inputs` tokens + `max_new_tokens` must be <= 2048. Given: 1244 `inputs` tokens and 1000 `max_new_tokens`".
  {
    pattern: new RegExp(String.raw`max_new_tokens\`? must be <= ${N}\. Given: ${N} \`?inputs\`? tokens and ${N} \`?max_new_tokens`, "i"),
    limit: 1,
    requested: [2, 3],
  },
  // Hugging Face TGI: "`inputs` must have less than 1024 tokens. Given: 1168".
  { pattern: new RegExp(String.raw`inputs\`? must have less than ${N} tokens\. Given: ${N}`, "i"), limit: 1, requested: [2] },
  // DashScope: "Range of input length should be [1, 983616]".
  { pattern: new RegExp(String.raw`range of input length should be \[1, ${N}\]`, "i"), limit: 1 },
  // SiliconFlow (code 20015): "length of prompt_tokens (68957) must be less than max_seq_len (65536)".
  { pattern: new RegExp(String.raw`length of prompt_tokens \(${N}\) must be less than max_seq_len \(${N}\)`, "i"), requested: [1], limit: 2 },
  // Gemini: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)".
  { pattern: new RegExp(String.raw`input token count \(${N}\) exceeds the maximum number of tokens allowed \(${N}\)`, "i"), requested: [1], limit: 2 },
];

/** Reads a positive whole count, or undefined. */
function countOf(value: unknown): number | undefined {
  if (typeof value === "string") value = Number(value.replace(/,/g, ""));
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** llama.cpp's body fields: `n_ctx` and `n_prompt_tokens` on the error object, wherever the error keeps it. */
function bodyFields(value: unknown, depth: number, seen: Set<unknown>): OverflowNumbers | undefined {
  if (depth > 6 || !isRecord(value) || seen.has(value)) return undefined;
  seen.add(value);
  const limit = countOf(value.n_ctx);
  const requested = countOf(value.n_prompt_tokens);
  if (limit !== undefined || requested !== undefined) {
    return { ...(limit !== undefined ? { limit } : {}), ...(requested !== undefined ? { requested } : {}) };
  }
  for (const key of ["error", "body", "cause", "response"]) {
    if (key in value) {
      const found = bodyFields(value[key], depth + 1, seen);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Reads the window and the request size an overflow refusal names: llama.cpp's `n_ctx` and
 * `n_prompt_tokens`, or the numbers in the sentence of any family the library knows.
 *
 * Either number is absent where the refusal does not give it; nothing is guessed. Never throws.
 */
export function overflowNumbers(error: unknown): OverflowNumbers {
  const found: OverflowNumbers = {};
  try {
    const fields = bodyFields(error, 0, new Set());
    if (fields?.limit !== undefined) found.limit = fields.limit;
    if (fields?.requested !== undefined) found.requested = fields.requested;
    if (found.limit !== undefined && found.requested !== undefined) return found;
    const message = describeError(error).message;
    for (const reading of READINGS) {
      const match = reading.pattern.exec(message);
      if (!match) continue;
      if (found.limit === undefined && reading.limit !== undefined) {
        const limit = countOf(match[reading.limit]);
        if (limit !== undefined) found.limit = limit;
      }
      if (found.requested === undefined && reading.requested !== undefined) {
        const parts = reading.requested.map((group) => countOf(match[group]));
        if (parts.every((part) => part !== undefined)) found.requested = parts.reduce<number>((sum, part) => sum + part!, 0);
      }
      if (found.limit !== undefined && found.requested !== undefined) break;
    }
  } catch {
    // A hostile getter leaves the numbers unknown.
  }
  return found;
}
