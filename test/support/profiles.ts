/**
 * @module profiles
 * How each OpenAI-compatible server family lists its models, streams a turn and words its
 * refusals, for the loopback test endpoint.
 *
 * Every refusal wording names the public source it was copied from in its `source` field: a file
 * in the server's own repository, or an issue thread where the body was quoted. Where no real
 * wording could be found the entry says so in `source` and is shaped like the family's other
 * errors, so a test can still exercise the path without pretending it is verbatim.
 */

/** The server families the loopback endpoint can imitate. */
export type ProfileName = "openai" | "llama.cpp" | "vllm" | "lmstudio" | "ollama" | "openrouter";

/** Every profile name, in a stable order, for tests that walk them all. */
export const PROFILE_NAMES: readonly ProfileName[] = ["openai", "llama.cpp", "vllm", "lmstudio", "ollama", "openrouter"];

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
  | "prefill";

/** Every refusal kind, in a stable order, for tests that walk them all. */
export const REFUSAL_KINDS: readonly RefusalKind[] = [
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
];

/**
 * What a refusal wording is filled in with; every field is optional and has a plausible default.
 *
 * A string passed where a detail is expected is read as `field` (or `value` for the effort).
 */
export interface RefusalDetail {
  /** The refused field's name (unknownField, unknownParameter, strict). */
  field?: string;
  /** The refused value (reasoningEffort, temperature, temperatureValue, maxTokensValue). */
  value?: string | number;
  /** The values the model takes instead (reasoningEffort). */
  supported?: string[];
  /** The model's name as the request spelled it. */
  model?: string;
  /** The prompt's size in tokens (contextOverflow, rateLimitTokens). */
  promptTokens?: number;
  /** The reply ceiling the request carried (contextOverflow, maxTokensValue). */
  completionTokens?: number;
  /** The served context window (contextOverflow). */
  window?: number;
  /** The model's largest reply (maxTokensValue). */
  ceiling?: number;
  /** The per-minute token limit (rateLimitTokens, requestTooLarge). */
  limit?: number;
  /** The tool or schema name the refusal names (strict, invalidSchema, schemaGrammar). */
  name?: string;
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
  invented?: boolean;
}

/** How a family streams a turn. */
export interface StreamStyle {
  /** Whether the stream opens with a content-free `{"role":"assistant"}` chunk. */
  roleChunk: boolean;
  /** The delta field the family streams the scratchpad in. */
  reasoningField: "reasoning_content" | "reasoning";
  /** Whether every content delta repeats `role: "assistant"` (Ollama, OpenRouter). */
  roleOnEveryChunk: boolean;
  /** Whether usage is sent without `stream_options.include_usage` being asked for. */
  usageAlways: boolean;
  /** Whether usage rides on the chunk carrying finish_reason rather than a chunk of its own. */
  usageOnFinalChunk: boolean;
  /** Whether the final chunk carries llama.cpp-style `timings`. */
  timings: boolean;
  /** SSE comment lines the family sends before its first chunk (OpenRouter's keep-alive). */
  leadingComments: string[];
  /** The prefix of the completion id. */
  idPrefix: string;
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
  /** LM Studio's `/api/v0/models` body, or null where the family has no such route. */
  lmstudioModels: (id: string, window: number) => unknown;
  /** The answer to a route the family does not serve. */
  notFound: (method: string, path: string) => { status: number; body: unknown; source: string };
  /** How the family streams. */
  stream: StreamStyle;
  /** The family's refusal wordings; a kind it has no wording for falls back to `fallbackError`. */
  refusals: Partial<Record<RefusalKind, RefusalWording>>;
  /** Shapes an error the family has no recorded wording for, in its usual error body. */
  fallbackError: (status: number, message: string, type: string) => unknown;
}

const created = 1_700_000_000;

function openaiError(message: string, type: string, param: string | null, code: string | null): unknown {
  return { error: { message, type, param, code } };
}

function quoteList(values: string[]): string {
  const quoted = values.map((value) => `'${value}'`);
  if (quoted.length <= 1) return quoted.join("");
  if (quoted.length === 2) return `${quoted[0]} and ${quoted[1]}`;
  return `${quoted.slice(0, -1).join(", ")}, and ${quoted[quoted.length - 1]}`;
}

const OPENAI_EFFORTS = ["minimal", "low", "medium", "high"];

/** OpenAI's wordings, shared by the proxies that pass OpenAI's own errors through. */
const openaiRefusals: Partial<Record<RefusalKind, RefusalWording>> = {
  unknownField: {
    status: 400,
    body: ({ field }) => openaiError(`Unrecognized request argument supplied: ${field ?? "min_p"}`, "invalid_request_error", null, null),
    source: "https://github.com/openai/openai-python/issues/1795",
  },
  unknownParameter: {
    status: 400,
    body: ({ field }) =>
      openaiError(`Unknown parameter: '${field ?? "min_p"}'.`, "invalid_request_error", field ?? "min_p", "unknown_parameter"),
    source: "https://github.com/openai/openai-python/issues/2072",
  },
  reasoningEffort: {
    status: 400,
    body: ({ value, supported }) =>
      openaiError(
        `Unsupported value: 'reasoning_effort' does not support '${value ?? "none"}' with this model. Supported values are: ${quoteList(supported ?? OPENAI_EFFORTS)}.`,
        "invalid_request_error",
        "reasoning_effort",
        "unsupported_value",
      ),
    source: "https://github.com/openai/openai-python/issues/2594",
  },
  reasoningEffortUnsupported: {
    status: 400,
    body: () =>
      openaiError(
        "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
        "invalid_request_error",
        "reasoning_effort",
        "unsupported_parameter",
      ),
    source: "https://github.com/openai/openai-python/issues/2072",
  },
  maxTokens: {
    status: 400,
    body: () =>
      openaiError(
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        "invalid_request_error",
        "max_tokens",
        "unsupported_parameter",
      ),
    source: "https://github.com/openai/openai-python/issues/1795",
  },
  temperature: {
    status: 400,
    body: ({ value }) =>
      openaiError(
        `Unsupported value: 'temperature' does not support ${value ?? 0.2} with this model. Only the default (1) value is supported.`,
        "invalid_request_error",
        "temperature",
        "unsupported_value",
      ),
    source: "https://github.com/openai/openai-python/issues/1795",
  },
  maxTokensValue: {
    status: 400,
    body: ({ value, ceiling }) =>
      openaiError(
        `max_tokens is too large: ${value ?? 100000}. This model supports at most ${ceiling ?? 16384} completion tokens, whereas you provided ${value ?? 100000}.`,
        "invalid_request_error",
        "max_tokens",
        "invalid_value",
      ),
    source: "https://github.com/openai/openai-python/issues/1795",
  },
  temperatureValue: {
    status: 400,
    body: ({ value }) =>
      openaiError(
        `Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got ${value ?? 3} instead.`,
        "invalid_request_error",
        "temperature",
        "decimal_above_max_value",
      ),
    source: "https://github.com/openai/openai-python/issues/1795",
  },
  contextOverflow: {
    status: 400,
    body: ({ window, promptTokens, completionTokens }) =>
      openaiError(
        `This model's maximum context length is ${window ?? 128000} tokens. However, your messages resulted in ${(promptTokens ?? 130000) + (completionTokens ?? 0)} tokens. Please reduce the length of the messages.`,
        "invalid_request_error",
        "messages",
        "context_length_exceeded",
      ),
    source: "https://github.com/openai/openai-python/issues/1795",
  },
  rateLimitTokens: {
    status: 429,
    body: ({ model, limit, promptTokens }) =>
      openaiError(
        `Request too large for ${model} in organization org-loopback on tokens per min (TPM): Limit ${limit ?? 30000}, Requested ${promptTokens ?? 50000}. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.`,
        "tokens",
        null,
        "rate_limit_exceeded",
      ),
    source: "https://github.com/openai/openai-python/issues/1795",
  },
  responseFormat: {
    status: 400,
    body: () =>
      openaiError(
        "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
        "invalid_request_error",
        "response_format",
        null,
      ),
    source: "https://github.com/openai/openai-python/issues/1795",
  },
  invalidSchema: {
    status: 400,
    body: ({ name }) =>
      openaiError(
        `Invalid schema for response_format '${name ?? "answer"}': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'b'.`,
        "invalid_request_error",
        "response_format",
        null,
      ),
    source: "https://github.com/openai/openai-python/issues/1795",
  },
};

function llamaError(code: number, message: string, type: string, extra: Record<string, unknown> = {}): unknown {
  return { error: { code, message, type, ...extra } };
}

const llamaRefusals: Partial<Record<RefusalKind, RefusalWording>> = {
  tools: {
    status: 500,
    body: () => llamaError(500, "tools param requires --jinja flag", "server_error"),
    source: "https://github.com/ggml-org/llama.cpp tools/server/utils.hpp (oaicompat_chat_params_parse)",
  },
  contextOverflow: {
    status: 400,
    body: ({ promptTokens, window }) =>
      llamaError(400, "the request exceeds the available context size, try increasing it", "exceed_context_size_error", {
        n_prompt_tokens: promptTokens ?? 5000,
        n_ctx: window ?? 4096,
      }),
    source: "https://github.com/ggml-org/llama.cpp tools/server/server.cpp (send_error, ERROR_TYPE_EXCEED_CONTEXT_SIZE)",
  },
  loading: {
    status: 503,
    body: () => llamaError(503, "Loading model", "unavailable_error"),
    source: "https://github.com/ggml-org/llama.cpp tools/server/server.cpp (ERROR_TYPE_UNAVAILABLE while loading)",
  },
  schemaGrammar: {
    status: 400,
    body: () => llamaError(400, "JSON schema conversion failed:\nUnrecognized schema: {\"not\":{}}", "invalid_request_error"),
    source: "https://github.com/ggml-org/llama.cpp common/json-schema-to-grammar.cpp",
  },
  prefill: {
    status: 400,
    body: () => llamaError(400, "Assistant response prefill is incompatible with enable_thinking.", "invalid_request_error"),
    source: "https://github.com/ggml-org/llama.cpp tools/server/utils.hpp (oaicompat_chat_params_parse)",
  },
  overflowInStream: {
    status: 200,
    body: ({ promptTokens, window }) =>
      llamaError(400, "the request exceeds the available context size, try increasing it", "exceed_context_size_error", {
        n_prompt_tokens: promptTokens ?? 5000,
        n_ctx: window ?? 4096,
      }),
    source: "https://github.com/ggml-org/llama.cpp tools/server/server.cpp (an error after the headers is sent as a data event)",
  },
};

function vllmError(message: string, type = "BadRequestError", code = 400): unknown {
  return { error: { message, type, param: null, code } };
}

const vllmRefusals: Partial<Record<RefusalKind, RefusalWording>> = {
  contextOverflow: {
    status: 400,
    body: ({ window, promptTokens, completionTokens }) =>
      vllmError(
        `This model's maximum context length is ${window ?? 4096} tokens. However, you requested ${(promptTokens ?? 5000) + (completionTokens ?? 0)} tokens (${promptTokens ?? 5000} in the messages, ${completionTokens ?? 0} in the completion). Please reduce the length of the messages or completion.`,
      ),
    source: "https://github.com/vllm-project/vllm vllm/entrypoints/openai/serving_engine.py (_validate_input)",
  },
};

function lmstudioError(message: string): unknown {
  return { error: message };
}

const lmstudioRefusals: Partial<Record<RefusalKind, RefusalWording>> = {};

function ollamaError(message: string, type = "invalid_request_error"): unknown {
  return { error: { message, type, param: null, code: null } };
}

const ollamaRefusals: Partial<Record<RefusalKind, RefusalWording>> = {};

function openrouterError(code: number, message: string, metadata?: Record<string, unknown>): unknown {
  return { error: { message, code, ...(metadata ? { metadata } : {}) } };
}

const openrouterRefusals: Partial<Record<RefusalKind, RefusalWording>> = {
  tools: {
    status: 404,
    body: () =>
      openrouterError(
        404,
        "No endpoints found that support tool use. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing",
      ),
    source: "https://github.com/OpenRouterTeam/openrouter-runner (quoted in issues of clients calling OpenRouter)",
  },
  contextOverflow: {
    status: 400,
    body: ({ window, promptTokens, completionTokens }) =>
      openrouterError(
        400,
        `This endpoint's maximum context length is ${window ?? 128000} tokens. However, you requested about ${(promptTokens ?? 130000) + (completionTokens ?? 0)} tokens (${promptTokens ?? 130000} of text input, ${completionTokens ?? 0} in the output). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.`,
      ),
    source: "openrouter",
  },
};

/** The families, keyed by name. */
export const PROFILES: Readonly<Record<ProfileName, Profile>> = {
  openai: {
    name: "openai",
    listing: (models) => ({ object: "list", data: models }),
    modelEntry: (id) => ({ id, object: "model", created, owned_by: "system" }),
    props: () => null,
    lmstudioModels: () => null,
    notFound: (method, path) => ({
      status: 404,
      body: openaiError(`Invalid URL (${method} ${path})`, "invalid_request_error", null, null),
      source: "https://github.com/openai/openai-python/issues/1795",
    }),
    stream: {
      roleChunk: true,
      reasoningField: "reasoning_content",
      roleOnEveryChunk: false,
      usageAlways: false,
      usageOnFinalChunk: false,
      timings: false,
      leadingComments: [],
      idPrefix: "chatcmpl-",
    },
    refusals: openaiRefusals,
    fallbackError: (_status, message, type) => openaiError(message, type, null, null),
  },
  "llama.cpp": {
    name: "llama.cpp",
    listing: (models) => ({ object: "list", data: models }),
    modelEntry: (id, window) => ({
      id,
      object: "model",
      created,
      owned_by: "llamacpp",
      meta: { vocab_type: 2, n_vocab: 151936, n_ctx_train: Math.max(window, 131072), n_embd: 4096, n_params: 8_000_000_000, size: 4_900_000_000 },
    }),
    props: (id, window) => ({
      default_generation_settings: { n_ctx: window, params: {} },
      total_slots: 1,
      model_path: `/models/${id}.gguf`,
      chat_template: "",
      build_info: "b6000-loopback",
    }),
    lmstudioModels: () => null,
    notFound: () => ({
      status: 404,
      body: llamaError(404, "File Not Found", "not_found_error"),
      source: "https://github.com/ggml-org/llama.cpp tools/server/server.cpp (ERROR_TYPE_NOT_FOUND)",
    }),
    stream: {
      roleChunk: true,
      reasoningField: "reasoning_content",
      roleOnEveryChunk: false,
      usageAlways: false,
      usageOnFinalChunk: false,
      timings: true,
      leadingComments: [],
      idPrefix: "chatcmpl-",
    },
    refusals: llamaRefusals,
    fallbackError: (status, message, type) => llamaError(status, message, type),
  },
  vllm: {
    name: "vllm",
    listing: (models) => ({ object: "list", data: models }),
    modelEntry: (id, window) => ({
      id,
      object: "model",
      created,
      owned_by: "vllm",
      root: id,
      parent: null,
      max_model_len: window,
      permission: [],
    }),
    props: () => null,
    lmstudioModels: () => null,
    notFound: () => ({ status: 404, body: { detail: "Not Found" }, source: "FastAPI's default 404 (vLLM serves through FastAPI)" }),
    stream: {
      roleChunk: true,
      reasoningField: "reasoning",
      roleOnEveryChunk: false,
      usageAlways: false,
      usageOnFinalChunk: false,
      timings: false,
      leadingComments: [],
      idPrefix: "chatcmpl-",
    },
    refusals: vllmRefusals,
    fallbackError: (status, message, type) => vllmError(message, type === "invalid_request_error" ? "BadRequestError" : type, status),
  },
  lmstudio: {
    name: "lmstudio",
    listing: (models) => ({ object: "list", data: models }),
    modelEntry: (id) => ({ id, object: "model", owned_by: "organization_owner" }),
    props: () => null,
    lmstudioModels: (id, window) => ({
      object: "list",
      data: [
        {
          id,
          object: "model",
          type: "llm",
          publisher: "loopback",
          arch: "qwen3",
          compatibility_type: "gguf",
          quantization: "Q4_K_M",
          state: "loaded",
          max_context_length: Math.max(window, 131072),
          loaded_context_length: window,
        },
      ],
    }),
    notFound: (method, path) => ({
      status: 200,
      body: { error: `Unexpected endpoint or method. (${method} ${path})` },
      source: "lmstudio",
    }),
    stream: {
      roleChunk: false,
      reasoningField: "reasoning_content",
      roleOnEveryChunk: true,
      usageAlways: true,
      usageOnFinalChunk: true,
      timings: false,
      leadingComments: [],
      idPrefix: "chatcmpl-",
    },
    refusals: lmstudioRefusals,
    fallbackError: (_status, message) => lmstudioError(message),
  },
  ollama: {
    name: "ollama",
    listing: (models) => ({ object: "list", data: models }),
    modelEntry: (id) => ({ id, object: "model", created, owned_by: "library" }),
    props: () => null,
    lmstudioModels: () => null,
    notFound: () => ({ status: 404, body: "404 page not found", source: "Go net/http / gin default 404 (Ollama serves through gin)" }),
    stream: {
      roleChunk: false,
      reasoningField: "reasoning",
      roleOnEveryChunk: true,
      usageAlways: false,
      usageOnFinalChunk: false,
      timings: false,
      leadingComments: [],
      idPrefix: "chatcmpl-",
    },
    refusals: ollamaRefusals,
    fallbackError: (_status, message, type) => ollamaError(message, type),
  },
  openrouter: {
    name: "openrouter",
    listing: (models) => ({ data: models }),
    modelEntry: (id, window) => ({
      id,
      canonical_slug: id,
      name: id,
      created,
      context_length: window,
      architecture: { modality: "text->text", input_modalities: ["text"], output_modalities: ["text"], tokenizer: "Other" },
      top_provider: { context_length: window, max_completion_tokens: 16384, is_moderated: false },
      supported_parameters: ["max_tokens", "temperature", "tools", "tool_choice", "response_format", "reasoning"],
    }),
    props: () => null,
    lmstudioModels: () => null,
    notFound: () => ({ status: 404, body: openrouterError(404, "Not Found"), source: "openrouter" }),
    stream: {
      roleChunk: false,
      reasoningField: "reasoning",
      roleOnEveryChunk: true,
      usageAlways: true,
      usageOnFinalChunk: true,
      timings: false,
      leadingComments: [": OPENROUTER PROCESSING"],
      idPrefix: "gen-",
    },
    refusals: openrouterRefusals,
    fallbackError: (status, message) => openrouterError(status, message),
  },
};

/** Looks a profile up by name, failing clearly on an unknown one. */
export function profileNamed(name: ProfileName): Profile {
  const profile = PROFILES[name];
  if (!profile) throw new Error(`unknown endpoint profile "${String(name)}"; expected one of ${PROFILE_NAMES.join(", ")}`);
  return profile;
}

/** The status, body and source a family answers one refusal with, falling back to a shaped stand-in. */
export function refusalWording(profile: Profile, kind: RefusalKind): RefusalWording {
  const own = profile.refusals[kind];
  if (own) return own;
  const shared = openaiRefusals[kind] ?? llamaRefusals[kind];
  const message = shared
    ? messageOf(shared.body({ model: "model" }))
    : `${kind} refused by the loopback endpoint`;
  const status = shared?.status ?? 400;
  return {
    status,
    body: (detail) => {
      const text = shared ? messageOf(shared.body(detail)) : message;
      return profile.fallbackError(status, text, "invalid_request_error");
    },
    source: `no ${profile.name} wording found; the message is another family's, in ${profile.name}'s error body`,
    invented: true,
  };
}

/** Reads the human message out of any family's error body. */
export function messageOf(body: unknown): string {
  if (typeof body === "string") return body;
  if (body && typeof body === "object") {
    const record = body as Record<string, unknown>;
    const error = record.error;
    if (typeof error === "string") return error;
    if (error && typeof error === "object") {
      const message = (error as Record<string, unknown>).message;
      if (typeof message === "string") return message;
    }
    if (typeof record.message === "string") return record.message;
    if (typeof record.detail === "string") return record.detail;
  }
  return JSON.stringify(body) ?? "";
}
