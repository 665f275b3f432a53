/**
 * @module retry
 * What to do when a request is lost, refused or too big.
 *
 * Status codes alone mislead: llama.cpp answers permanent refusals with a 500, Groq sends a
 * tokens-per-minute limit as a 413, and an overflow can arrive inside a 200 stream. So every
 * test here reads the wording and the body first and the status second, through one reader of
 * error bodies. The two errors the classifiers know by name live beside this file, each in its
 * own: text/context-overflow and text/endpoint-silent.
 */

import { ContextOverflow } from "./context-overflow.js";
import { EndpointSilent } from "./endpoint-silent.js";
import { describeError, type ErrorDescription } from "./error-body.js";

const OVERFLOW_WORDS: RegExp[] = [
  /context[_ ]length[_ ]exceeded/i,
  /exceed_context_size/i,
  /maximum context length/i,
  /exceeds? (?:the )?(?:available |model'?s? )?context (?:size|length|window)/i,
  /context (?:window|length|size) (?:is |has been )?(?:exceeded|too small|full)/i,
  /(?:prompt|input|request) (?:is )?too long/i,
  /reduce the length of the (?:messages|prompt|input)/i,
  /longer than the model'?s? context/i,
  // Ollama's llama-server runner: "the prompt is longer than the context length currently available to the model; …".
  /longer than the context length/i,
  // SiliconFlow: "length of prompt_tokens (68957) must be less than max_seq_len (65536)". Its code
  // 20015 says only that a parameter is wrong (it also comes with a missing reasoning_content,
  // agentscope-ai/QwenPaw#433), so the words decide, not the code.
  /must be less than max_seq_len/i,
  // Gemini: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)".
  /input token count \(\d+\) exceeds the maximum number of tokens/i,
  /too many tokens/i,
  /n_ctx/i,
  /tokens? (?:exceed|exceeds) (?:the )?(?:limit|context)/i,
  /context overflow/i,
  // LM Studio: "Trying to keep the first N tokens when context the overflows. However, the model
  // is loaded with context length of only M tokens, which is not enough."
  /when context the overflows/i,
  /loaded with (?:a )?context length of only/i,
  // Zhipu GLM (code 1261): "Prompt exceeds max length".
  /prompt exceeds (?:the )?max(?:imum)? length/i,
  // DashScope: "Range of input length should be [1, 983616]".
  /range of input length should be/i,
  // Hugging Face TGI: "`inputs` tokens + `max_new_tokens` must be <= 2048", "`inputs` must have less than 1024 tokens".
  /`?inputs`? tokens \+ `?max_new_tokens`? must be <=/i,
  /`?inputs`? must have less than \d+ tokens/i,
  // Moonshot / Kimi: "Invalid request: Your request exceeded model token limit: 262144 (requested: 269030)",
  // and for a prompt plus max_tokens over the window: "model max length exceeded, max length:8192".
  /exceeded model token limit/i,
  /model max length exceeded/i,
  // Baidu Qianfan (ERNIE): "the max length of current question is 2000".
  /max length of current question is/i,
  // Volcano Engine Ark (OutofContextError): "Total tokens of image and text exceed max message tokens."
  /exceeds? max message tokens/i,
];

/** Error codes that name an overflow whatever the words: OpenAI's, and Ark's `OutofContextError`. */
const OVERFLOW_CODES: ReadonlySet<string> = new Set(["context_length_exceeded", "OutofContextError"]);

// Baidu Qianfan's numeric `error_code`s for a question over the window (336007, 336103) and for
// request-rate limits that clear by themselves (4 cluster limit, 18 QPS, 336501 and 336502 RPM
// and TPM); 17 (daily) and 19 (total) are quotas and stay out.
const BAIDU_OVERFLOW_CODES: ReadonlySet<number> = new Set([336007, 336103]);
const BAIDU_RATE_CODES: ReadonlySet<number> = new Set([4, 18, 336501, 336502]);

// A quota or spending cap spent is not a rate limit: waiting seconds does not bring it back.
// OpenAI's insufficient_quota, Ark's QuotaExceeded (free trial spent) and SetLimitExceeded (the
// account's own cap), Moonshot's exceeded_current_quota_error.
const QUOTA_CODES: ReadonlySet<string> = new Set(["insufficient_quota", "QuotaExceeded", "SetLimitExceeded", "exceeded_current_quota_error"]);

const RATE_WORDS = /(?:tokens|requests) per (?:min|minute|day|hour)|\b(?:TPM|RPM|TPD|RPD|QPS)\b|rate[_ ]?limit|open api (?:qps )?request limit reached/i;

// A server error that a second try repeats: Ollama's runner dying while it loads or runs the model
// (an illegal instruction, a failed assertion, out of memory) dies the same way on the next load.
const CRASH_WORDS = /(?:llama runner|llama-server) process (?:has )?terminated/i;

const NETWORK_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CLOSED",
]);

const NETWORK_WORDS =
  /socket hang up|fetch failed|connection (?:error|reset|closed|refused|terminated)|other side closed|terminated|premature close|network error|stream (?:ended|closed) (?:early|unexpectedly)|ended before/i;

const REFUSAL_WORDS = /unsupported|not supported|unrecognized|unknown (?:parameter|field|argument)|requires|invalid|not allowed|does not support/i;

function networkCode(error: unknown, depth = 0): string | undefined {
  if (depth > 4 || typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && NETWORK_CODES.has(code)) return code;
  return networkCode((error as { cause?: unknown }).cause, depth + 1);
}

function isRateLimit(description: ErrorDescription): boolean {
  if (description.status === 429) return true;
  if (description.code === "rate_limit_exceeded") return true;
  if (description.errorCode !== undefined && BAIDU_RATE_CODES.has(description.errorCode)) return true;
  return RATE_WORDS.test(description.message);
}

function isQuotaSpent(description: ErrorDescription): boolean {
  return (description.code !== undefined && QUOTA_CODES.has(description.code)) || (description.type !== undefined && QUOTA_CODES.has(description.type));
}

/**
 * Says whether a failure is the endpoint refusing the request as too long for the window.
 *
 * The wording decides, whatever the status (some servers send it inside a 200 stream); a rate
 * limit that borrows the same words ("Request too large … on tokens per min") is not one.
 */
export function isOverflow(error: unknown): boolean {
  if (ContextOverflow.is(error)) return true;
  const description = describeError(error);
  if (isRateLimit(description)) return false;
  if (description.code !== undefined && OVERFLOW_CODES.has(description.code)) return true;
  if (description.errorCode !== undefined && BAIDU_OVERFLOW_CODES.has(description.errorCode)) return true;
  if (description.type === "exceed_context_size_error") return true;
  return OVERFLOW_WORDS.some((pattern) => pattern.test(description.message));
}

/**
 * Says whether the server is still loading the model (llama.cpp's 503 "Loading model", a
 * router swapping models), which is waited for on its own clock rather than retried.
 */
export function isModelLoading(error: unknown): boolean {
  const description = describeError(error);
  if (description.status !== undefined && description.status !== 503) return false;
  // Hugging Face's serverless API and Inference Endpoints: "Model X is currently loading".
  return /loading model|model (?:is )?(?:still )?loading|is being loaded|loading the model|is currently loading/i.test(description.message);
}

/**
 * Says whether a failure is worth sending the same request again: a dropped or refused
 * connection, a silent endpoint, a rate limit, or a server error whose words do not name
 * something the request asked for.
 *
 * A context overflow is never transient, and neither is a 5xx that reads as a refusal (llama.cpp
 * answers "tools param requires --jinja flag" with a 500), a runner that crashed (Ollama's
 * "llama runner process has terminated"), or a 429 for a spent quota rather than a rate.
 */
export function isTransient(error: unknown): boolean {
  if (ContextOverflow.is(error)) return false;
  if (EndpointSilent.is(error)) return true;
  if (error instanceof Error && (error.name === "AbortError" || error.name === "APIUserAbortError")) return false;
  if (networkCode(error)) return true;
  const description = describeError(error);
  if (isOverflow(error)) return false;
  // A stream that stopped before the wire said the reply was whole is a lost connection, however it stopped.
  if (error instanceof Error && (error.name === "APIConnectionError" || error.name === "APIConnectionTimeoutError" || error.name === "StreamInterrupted"))
    return true;
  const status = description.status;
  if (isQuotaSpent(description)) return false;
  // A rate limit inside a 200 body (Baidu's `{ error_code: 18 }`) or with no status at all.
  if ((status === undefined || status === 200) && isRateLimit(description)) return true;
  if (CRASH_WORDS.test(description.message)) return false;
  if (status === undefined) return NETWORK_WORDS.test(description.message);
  if (status === 429) return true;
  if (status === 413) return isRateLimit(description);
  if (status === 408 || status === 425) return true;
  if (status === 503 || status === 502 || status === 504 || status === 529) return true;
  if (status === 500) return !REFUSAL_WORDS.test(description.message);
  return false;
}

/** Options for {@link backoffMs}. */
export interface BackoffOptions {
  /** The first wait, in milliseconds. @default 1000 */
  baseMs?: number | undefined;
  /** The longest wait, in milliseconds. @default 8000 */
  capMs?: number | undefined;
}

function retryAfterMs(error: unknown): number | undefined {
  const headers = (error as { headers?: unknown } | null)?.headers;
  let value: unknown;
  if (headers && typeof (headers as Headers).get === "function") value = (headers as Headers).get("retry-after");
  else if (headers && typeof headers === "object") value = (headers as Record<string, unknown>)["retry-after"];
  if (typeof value !== "string" || value === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

/**
 * How long to wait before retry number `attempt` (0 for the first retry): doubling from one
 * second to a cap of eight, or the server's Retry-After where it sent one (held to 60 s).
 */
export function backoffMs(attempt: number, error?: unknown, options: BackoffOptions = {}): number {
  const base = options.baseMs ?? 1000;
  const cap = options.capMs ?? 8000;
  const told = error === undefined ? undefined : retryAfterMs(error);
  if (told !== undefined) return Math.min(told, 60_000);
  const step = Number.isFinite(attempt) && attempt > 0 ? Math.floor(attempt) : 0;
  return Math.min(cap, base * 2 ** Math.min(step, 30));
}
