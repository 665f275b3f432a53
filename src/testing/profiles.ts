/**
 * @module testing/profiles
 * How each OpenAI-compatible server family lists its models, streams a turn and words its
 * refusals, for the loopback test endpoint.
 *
 * Every refusal wording names the public source it was copied from in its `source` field: a file
 * in the server's own repository, or an issue thread where the body was quoted. Where no real
 * wording could be found the entry says so in `source` and is shaped like the family's other
 * errors, so a test can still exercise the path without pretending it is verbatim.
 */
import { deepFreeze, llamaError, lmstudioError, ollamaError, openaiError, openrouterError, vllmError, WORDINGS } from "./wordings.js";
import { PROFILE_NAMES, type Profile, type ProfileName, type RefusalKind, type RefusalWording } from "./profile-types.js";

export * from "./profile-types.js";

const created = 1_700_000_000;

/** The families, keyed by name. */
export const PROFILES: Readonly<Record<ProfileName, Profile>> = deepFreeze({
  openai: {
    name: "openai",
    listing: (models) => ({ object: "list", data: models }),
    modelEntry: (id) => ({ id, object: "model", created, owned_by: "system" }),
    props: () => null,
    lmstudioModels: () => null,
    notFound: (method, path) => ({
      status: 404,
      body: openaiError(`Invalid URL (${method} ${path})`, "invalid_request_error", null, null),
      source: "https://github.com/harry0703/MoneyPrinterTurbo/issues/57",
    }),
    stream: {
      roleChunk: true,
      reasoningField: "reasoning_content",
      roleOnEveryChunk: false,
      usageInStream: "when-asked",
      usageOnFinalChunk: false,
      timings: false,
      cachedAlways: true,
      leadingComments: [],
      idPrefix: "chatcmpl-",
      toolCallIndexes: "each",
      callIdOnEveryChunk: false,
      source:
        "OpenAI chat streaming reference: role chunk first, usage as a last chunk with empty choices only under stream_options.include_usage",
    },
    refusals: WORDINGS.openai,
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
      // meta.n_ctx is the window each slot serves (-c over -np), beside the trained n_ctx_train.
      meta: { vocab_type: 2, n_vocab: 151936, n_ctx: window, n_ctx_train: Math.max(window, 131072), n_embd: 4096, n_params: 8_000_000_000, size: 4_900_000_000 },
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
      source: "ggml-org/llama.cpp tools/server/server.cpp (the error handler answers format_error_response(\"File Not Found\", ERROR_TYPE_NOT_FOUND))",
    }),
    stream: {
      roleChunk: true,
      reasoningField: "reasoning_content",
      roleOnEveryChunk: false,
      usageInStream: "when-asked",
      usageOnFinalChunk: false,
      timings: true,
      cachedAlways: true,
      leadingComments: [],
      idPrefix: "chatcmpl-",
      toolCallIndexes: "each",
      callIdOnEveryChunk: false,
      source:
        "ggml-org/llama.cpp tools/server/server-task.cpp (to_json_oaicompat_chat_stream: usage chunk with empty choices only when include_usage, timings on the last chunk; usage_json_oaicompat always carries prompt_tokens_details.cached_tokens; result_timings::to_json adds draft_n and draft_n_accepted when drafting)",
    },
    refusals: WORDINGS["llama.cpp"],
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
    notFound: () => ({ status: 404, body: { detail: "Not Found" }, source: "FastAPI's default 404 body; vLLM's OpenAI server is a FastAPI app (vllm/entrypoints/openai/api_server.py)" }),
    stream: {
      roleChunk: true,
      reasoningField: "reasoning",
      roleOnEveryChunk: false,
      usageInStream: "when-asked",
      usageOnFinalChunk: false,
      timings: false,
      cachedAlways: false,
      leadingComments: [],
      idPrefix: "chatcmpl-",
      toolCallIndexes: "each",
      callIdOnEveryChunk: true,
      source:
        "vllm-project/vllm vllm/entrypoints/openai/serving_chat.py (role chunk first, usage chunk only under include_usage; the reasoning delta field is named reasoning in current releases, reasoning_content before; the tool parsers repeat the call's id on every DeltaToolCall of one call)",
    },
    refusals: WORDINGS.vllm,
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
      source: "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/618 (LM Studio answers an unknown route with 200)",
    }),
    stream: {
      roleChunk: false,
      reasoningField: "reasoning_content",
      roleOnEveryChunk: true,
      usageInStream: "never",
      usageOnFinalChunk: false,
      timings: false,
      cachedAlways: false,
      leadingComments: [],
      idPrefix: "chatcmpl-",
      toolCallIndexes: "each",
      callIdOnEveryChunk: false,
      source:
        "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/676 (role repeated on each delta, no role-only opening chunk, no usage in the stream) and https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/713 (stream_options not honoured)",
    },
    refusals: WORDINGS.lmstudio,
    fallbackError: (_status, message) => lmstudioError(message),
  },
  ollama: {
    name: "ollama",
    listing: (models) => ({ object: "list", data: models }),
    modelEntry: (id) => ({ id, object: "model", created, owned_by: "library" }),
    props: () => null,
    lmstudioModels: () => null,
    notFound: () => ({ status: 404, body: "404 page not found", source: "gin's default 404 body (gin-gonic/gin gin.go default404Body); Ollama's server is a gin router (ollama/ollama server/routes.go)" }),
    stream: {
      roleChunk: false,
      reasoningField: "reasoning",
      roleOnEveryChunk: true,
      usageInStream: "when-asked",
      usageOnFinalChunk: false,
      timings: false,
      cachedAlways: false,
      leadingComments: [],
      idPrefix: "chatcmpl-",
      toolCallIndexes: "zero",
      callIdOnEveryChunk: false,
      source:
        "ollama/ollama openai/openai.go (each delta carries the role; usage only under include_usage; thinking streamed as reasoning; toToolCalls sends each call whole with a fresh id and the index its parser gave, 0 for every call of a parallel batch: https://github.com/ollama/ollama/issues/15457)",
    },
    refusals: WORDINGS.ollama,
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
    notFound: () => ({
      status: 404,
      body: openrouterError(404, "Not Found"),
      source: "no public wording found; shaped like OpenRouter's other errors",
    }),
    stream: {
      roleChunk: false,
      reasoningField: "reasoning",
      roleOnEveryChunk: true,
      usageInStream: "always",
      usageOnFinalChunk: true,
      timings: false,
      cachedAlways: true,
      leadingComments: [": OPENROUTER PROCESSING"],
      idPrefix: "gen-",
      toolCallIndexes: "each",
      callIdOnEveryChunk: false,
      source:
        "https://openrouter.ai/docs/api_reference/streaming (\": OPENROUTER PROCESSING\" comments) and https://openrouter.ai/docs/use-cases/usage-accounting (usage always in the last message)",
    },
    refusals: WORDINGS.openrouter,
    fallbackError: (status, message) => openrouterError(status, message),
  },
});

/** Looks a profile up by name, failing clearly on an unknown one. */
export function profileNamed(name: ProfileName): Profile {
  const profile = PROFILES[name];
  if (!profile) throw new Error(`unknown endpoint profile "${String(name)}"; expected one of ${PROFILE_NAMES.join(", ")}`);
  return profile;
}

/**
 * The status, body and source a family answers one refusal with.
 *
 * A kind the family has no recorded wording for falls back to a stand-in marked `invented`: an
 * overflow inside a stream reuses the family's own overflow wording, anything else borrows
 * OpenAI's (or llama.cpp's) message and status and puts it in this family's error body.
 */
export function refusalWording(profile: Profile, kind: RefusalKind): RefusalWording {
  const own = profile.refusals[kind];
  if (own) return own;
  const overflow = profile.refusals.contextOverflow;
  if (kind === "overflowInStream" && overflow) {
    return {
      status: 200,
      body: overflow.body,
      source: `no ${profile.name} thread shows it inside a stream; the family's overflow wording (${overflow.source}) sent as a stream event`,
      invented: true,
    };
  }
  const shared = WORDINGS.openai[kind] ?? WORDINGS["llama.cpp"][kind];
  const status = kind === "overflowInStream" ? 200 : (shared?.status ?? 400);
  return {
    status,
    body: (detail) => {
      const text = shared ? messageOf(shared.body(detail)) : `${kind} refused`;
      return profile.fallbackError(status === 200 ? 400 : status, text, status === 503 ? "unavailable_error" : "invalid_request_error");
    },
    source: `no ${profile.name} wording found; ${shared ? `the message is from ${shared.source}` : "the message is made up"}, in ${profile.name}'s error body`,
    invented: true,
  };
}

/** Reads the human message out of any family's error body, parsed or as the raw text. */
export function messageOf(body: unknown): string {
  if (typeof body === "string") {
    const trimmed = body.trim();
    if (trimmed.startsWith("{")) {
      try {
        return messageOf(JSON.parse(trimmed) as unknown);
      } catch {
        return body;
      }
    }
    return body;
  }
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
