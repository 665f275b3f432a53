/**
 * @module testing/profile-types
 * The shapes of a server family as the loopback endpoint imitates it: its name, the refusals it
 * can be told to make, and how it lists, streams and words them.
 */

import type { ReasoningCarrier } from "./turn-carriers.js";

/** The server families the loopback endpoint can imitate. */
export type ProfileName = "openai" | "llama.cpp" | "vllm" | "lmstudio" | "ollama" | "openrouter" | "deepseek";

/** Every profile name, in a stable order, for tests that walk them all. */
export const PROFILE_NAMES: readonly ProfileName[] = Object.freeze(["openai", "llama.cpp", "vllm", "lmstudio", "ollama", "openrouter", "deepseek"]);

/**
 * The things a server or model may refuse that the specification names.
 *
 * - `streamOptions`: the `stream_options` field (usage in the stream) as a whole.
 * - `strict`: `strict: true` on a tool's function or a json_schema response format.
 * - `tools`: the `tools` field at all.
 * - `reasoningEffort`: a `reasoning_effort` value, answered with the values the model takes.
 * - `reasoningEffortUnsupported`: `reasoning_effort` as a parameter, for a model that takes none.
 * - `maxTokens`: `max_tokens` in favour of `max_completion_tokens`.
 * - `temperature`: any temperature but the model's default of 1.
 * - `unknownField`: a field the server does not know ("Unrecognized request argument supplied").
 * - `unknownParameter`: the same, in the other wording ("Unknown parameter: 'x'.").
 * - `responseFormat`: a `response_format` of type `json_schema`.
 * - `schemaGrammar`: a schema the server cannot compile into a grammar.
 * - `invalidSchema`: a schema the server finds invalid.
 * - `maxTokensValue`: a ceiling above what the model can produce (a value refusal).
 * - `temperatureValue`: a temperature out of range (a value refusal).
 * - `contextOverflow`: a prompt (and ceiling) larger than the window.
 * - `rateLimitTokens`: the 429 that borrows overflow's words ("Request too large … tokens per min").
 * - `requestTooLarge`: Groq's 413 for a request over its per-minute token limit.
 * - `loading`: the model is still being loaded (llama.cpp's 503 "Loading model").
 * - `overflowInStream`: a context overflow sent as an error event inside a 200 stream.
 * - `prefill`: a trailing assistant message the server will not continue.
 * - `reasoningEffortWithTools`: a `reasoning_effort` beside function tools (OpenAI's chat
 *   completions for gpt-5.x), taken in a request that declares none.
 * - `parallelToolCallsWithoutTools`: `parallel_tool_calls` in a request that declares no tools,
 *   taken beside them.
 * - `reasoningMissing`: a thinking-mode history without the `reasoning_content` the model wants back (DeepSeek).
 * - `reasoningField`: a reasoning field on an input message the server does not take (Groq).
 * - `reasoningBoth`: a tool-call message with both text and reasoning (llama.cpp's gpt-oss template).
 * - `systemNotFirst`: a system message past the first (Qwen 3.5's template).
 * - `toolCallReasoning`: a tool-call message without `reasoning_content` in thinking mode (Kimi K2).
 * - `toolCallId`: a tool-call id that is not nine letters and digits (Mistral).
 * - `callFieldMissing`: a replayed call without the field its model put on it (Gemini 3's thought signature).
 * - `messageField`: a field on a message or a call the server does not know.
 */
export type RefusalKind =
  | "streamOptions"
  | "strict"
  | "tools"
  | "reasoningEffort"
  | "reasoningEffortUnsupported"
  | "maxTokens"
  | "temperature"
  | "unknownField"
  | "unknownParameter"
  | "responseFormat"
  | "schemaGrammar"
  | "invalidSchema"
  | "maxTokensValue"
  | "temperatureValue"
  | "contextOverflow"
  | "rateLimitTokens"
  | "requestTooLarge"
  | "loading"
  | "overflowInStream"
  | "prefill"
  | "reasoningEffortWithTools"
  | "parallelToolCallsWithoutTools"
  | "reasoningMissing"
  | "reasoningField"
  | "reasoningBoth"
  | "systemNotFirst"
  | "toolCallReasoning"
  | "toolCallId"
  | "callFieldMissing"
  | "messageField";

/** Every refusal kind, in a stable order, for tests that walk them all. */
export const REFUSAL_KINDS: readonly RefusalKind[] = Object.freeze([
  "streamOptions",
  "strict",
  "tools",
  "reasoningEffort",
  "reasoningEffortUnsupported",
  "maxTokens",
  "temperature",
  "unknownField",
  "unknownParameter",
  "responseFormat",
  "schemaGrammar",
  "invalidSchema",
  "maxTokensValue",
  "temperatureValue",
  "contextOverflow",
  "rateLimitTokens",
  "requestTooLarge",
  "loading",
  "overflowInStream",
  "prefill",
  "reasoningEffortWithTools",
  "parallelToolCallsWithoutTools",
  "reasoningMissing",
  "reasoningField",
  "reasoningBoth",
  "systemNotFirst",
  "toolCallReasoning",
  "toolCallId",
  "callFieldMissing",
  "messageField",
]);

/**
 * What a refusal wording is filled in with; every field is optional and has a plausible default.
 *
 * A string passed where a detail is expected is read as `field` (or `value` for the effort).
 */
export interface RefusalDetail {
  /** The refused field's name (unknownField, unknownParameter, strict). */
  field?: string | undefined;
  /** The refused value (reasoningEffort, temperature, temperatureValue, maxTokensValue). */
  value?: string | number | undefined;
  /** The values the model takes instead (reasoningEffort; reasoningEffortWithTools, where `["none"]` words the newer refusal that offers it). */
  supported?: string[] | undefined;
  /** The model's name as the request spelled it. */
  model?: string | undefined;
  /** The prompt's size in tokens (contextOverflow, rateLimitTokens). */
  promptTokens?: number | undefined;
  /** The reply ceiling the request carried (contextOverflow, maxTokensValue). */
  completionTokens?: number | undefined;
  /** The served context window (contextOverflow). */
  window?: number | undefined;
  /** The model's largest reply (maxTokensValue). */
  ceiling?: number | undefined;
  /** The per-minute token limit (rateLimitTokens, requestTooLarge). */
  limit?: number | undefined;
  /** The tool or schema name the refusal names (strict, invalidSchema, schemaGrammar). */
  name?: string | undefined;
}

/** A family's real answer to one refusal: status, body and where the wording was found. */
export interface RefusalWording {
  /** The HTTP status the server answers with (200 for an error sent inside a stream). */
  status: number;
  /** Builds the body from the details of this request; a string body is sent as text. */
  body: (detail: Required<Pick<RefusalDetail, "model">> & RefusalDetail) => unknown;
  /** Where the wording comes from: a file in the server's repository or an issue thread URL. */
  source: string;
  /** True where no real wording was found and the body is only shaped like the family's errors. */
  invented?: boolean | undefined;
}

/** How a family streams a turn. */
export interface StreamStyle {
  /** Whether the stream opens with a content-free `{"role":"assistant"}` chunk. */
  roleChunk: boolean;
  /** The delta field the family streams the scratchpad in. */
  reasoningField: "reasoning_content" | "reasoning";
  /**
   * How the family hands over the scratchpad where not in `reasoningField`: as content parts, or
   * raw in the content in one model family's markup.
   * @default "field"
   */
  reasoningAs?: ReasoningCarrier;
  /** Whether every delta repeats `role: "assistant"` (LM Studio, Ollama, OpenRouter). */
  roleOnEveryChunk: boolean;
  /** When a stream carries usage: only under `stream_options.include_usage`, always, or never. */
  usageInStream: "when-asked" | "always" | "never";
  /** Whether usage rides on the chunk carrying finish_reason rather than a chunk of its own. */
  usageOnFinalChunk: boolean;
  /** Whether the final chunk carries llama.cpp-style `timings`. */
  timings: boolean;
  /** Whether usage always carries `prompt_tokens_details.cached_tokens`, zero on a cold cache. */
  cachedAlways: boolean;
  /** SSE comment lines the family sends before its first chunk (OpenRouter's keep-alive). */
  leadingComments: string[];
  /** The prefix of the completion id. */
  idPrefix: string;
  /**
   * How many random letters and digits follow the prefix of the completion id and make up each
   * tool-call id a turn does not name (llama.cpp: 32); absent, the id is the prefix and
   * `loopback`, and a tool call is `call_<index>`.
   */
  randomIds?: number | undefined;
  /** Whether each choice carries `logprobs: null` (llama.cpp's carries no such field). */
  logprobs: boolean;
  /** The `system_fingerprint` every chunk and completion carries, where the family sends one. */
  fingerprint?: string | undefined;
  /** Whether a tool call's first delta (the one with its id and name) already carries the opening `{` of its arguments. */
  argumentsOpen: boolean;
  /**
   * How parallel tool calls are indexed: `"each"` gives every call its own index, `"zero"` puts
   * them all at index 0 (Ollama), each call then sent whole in one chunk with a fresh id.
   */
  toolCallIndexes: "each" | "zero";
  /** Whether every chunk of one tool call repeats the call's id (vLLM), not only the first. */
  callIdOnEveryChunk: boolean;
  /** Where the streaming habits were read from. */
  source: string;
}

/** A status and body a family answers with on its own, and where that was seen. */
export interface ErrorAnswer {
  /** The HTTP status. */
  status: number;
  /** The body, sent as JSON (a string as text). */
  body: unknown;
  /** Where the answer was recorded or read. */
  source: string;
  /** The refusal kind the answer is, recorded on the request where given. */
  refusal?: RefusalKind | undefined;
}

/** A server family: its listings, its 404, how it streams and how it refuses. */
export interface Profile {
  /** The family's name. */
  name: ProfileName;
  /** The `/v1/models` body for these entries. */
  listing: (models: Record<string, unknown>[]) => unknown;
  /** A default `/v1/models` entry for a model served with this window. */
  modelEntry: (id: string, window: number) => Record<string, unknown>;
  /** llama.cpp's `/props` body, or null where the family has no such route. */
  props: (id: string, window: number) => unknown;
  /** The `/health` body of a ready server, or null where the family has no such route. */
  health: () => unknown;
  /** Whether every route, `/health` and the listing included, answers the loading refusal while the model loads (llama.cpp); otherwise only chat requests do. */
  loadingEveryRoute: boolean;
  /**
   * The message fields the family reads an assistant turn's reasoning back from, where known;
   * the endpoint records what it read off each request as `replayed`.
   */
  reasoningInput?: readonly ("reasoning_content" | "reasoning")[] | undefined;
  /** Checks the family makes on a chat body before a model reads it; undefined where it takes the body. */
  check?: (body: Record<string, unknown>) => ErrorAnswer | undefined;
  /** What a server started with a key answers a request without it, or with another one. */
  unauthorized: ErrorAnswer;
  /** The routes (`"GET /health"`) a server started with a key still answers without one. */
  openRoutes: readonly string[];
  /** LM Studio's `/api/v0/models` body, or null where the family has no such route. */
  lmstudioModels: (id: string, window: number) => unknown;
  /** Ollama's `/api/ps` body (the models loaded, each with its window); absent where the family has no such route. */
  loadedModels?: (id: string, window: number) => unknown;
  /** The answer to a route the family does not serve. */
  notFound: (method: string, path: string) => { status: number; body: unknown; source: string };
  /** How the family streams. */
  stream: StreamStyle;
  /** The family's refusal wordings; a kind it has no wording for falls back to `fallbackError`. */
  refusals: Partial<Record<RefusalKind, RefusalWording>>;
  /** Shapes an error the family has no recorded wording for, in its usual error body. */
  fallbackError: (status: number, message: string, type: string) => unknown;
}
