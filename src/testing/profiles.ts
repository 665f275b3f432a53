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
import { deepFreeze, llamaError, lmstudioError, ollamaError, openaiError, openrouterError, vllmError, WORDINGS } from "./refusal-wordings.js";
import { PROFILE_NAMES, type ErrorAnswer, type Profile, type ProfileName, type RefusalKind, type RefusalWording } from "./profile-types.js";
import { LLAMA_BUILD, LLAMA_UNAUTHORIZED, llamaCheck, llamaListing, llamaModelEntry, llamaProps } from "./profile-llama.js";
import { deepseekCheck, deepseekListing, deepseekModelEntry } from "./profile-deepseek.js";
import { deepseekError } from "./refusal-wordings-replay.js";

export * from "./profile-types.js";

const created = 1_700_000_000;

/** A family's 401 where none was recorded: its own error body around a plain sentence. */
function unauthorizedIn(family: string, body: unknown): ErrorAnswer {
  return { status: 401, body, source: `no ${family} wording recorded; shaped like the family's other errors` };
}

/** The habits every family shares unless its entry says otherwise. */
const PLAIN = { health: () => null, loadingEveryRoute: false, openRoutes: [] as string[] };

/** The families, keyed by name. */
export const PROFILES: Readonly<Record<ProfileName, Profile>> = deepFreeze({
  openai: {
    name: "openai",
    listing: (models) => ({ object: "list", data: models }),
    modelEntry: (id) => ({ id, object: "model", created, owned_by: "system" }),
    props: () => null,
    lmstudioModels: () => null,
    ...PLAIN,
    unauthorized: {
      status: 401,
      body: openaiError(
        "Incorrect API key provided: sk-wrong. You can find your API key at https://platform.openai.com/account/api-keys.",
        "invalid_request_error",
        null,
        "invalid_api_key",
      ),
      source: "https://github.com/chatanywhere/GPT_API_free/issues/62",
    },
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
      logprobs: true,
      fingerprint: "fp_loopback",
      argumentsOpen: false,
      toolCallIndexes: "each",
      callIdOnEveryChunk: false,
      source: "OpenAI chat streaming reference: role chunk first, usage as a last chunk with empty choices only under stream_options.include_usage",
    },
    refusals: WORDINGS.openai,
    fallbackError: (_status, message, type) => openaiError(message, type, null, null),
  },
  "llama.cpp": {
    name: "llama.cpp",
    listing: llamaListing,
    modelEntry: llamaModelEntry,
    props: llamaProps,
    lmstudioModels: () => null,
    health: () => ({ status: "ok" }),
    loadingEveryRoute: true,
    // common/chat.cpp hands the gpt-oss template reasoning_content (as thinking) on a tool-call message.
    reasoningInput: ["reasoning_content"],
    check: llamaCheck,
    unauthorized: LLAMA_UNAUTHORIZED,
    openRoutes: ["GET /health", "GET /v1/models", "GET /models"],
    notFound: () => ({
      status: 404,
      body: llamaError(404, "File Not Found", "not_found_error"),
      source:
        'ggml-org/llama.cpp tools/server/server.cpp (the error handler answers format_error_response("File Not Found", ERROR_TYPE_NOT_FOUND)); recorded in test/fixtures/llama.cpp/listing.json (missing)',
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
      randomIds: 32,
      logprobs: false,
      fingerprint: LLAMA_BUILD,
      argumentsOpen: true,
      toolCallIndexes: "each",
      callIdOnEveryChunk: false,
      source:
        "recorded from llama-server in test/fixtures/llama.cpp/stream.json and tool-calls.json: a role chunk with content null first; choices without logprobs; system_fingerprint on every chunk; a usage chunk with empty choices only under include_usage, cached_tokens always; timings on the last chunk (the usage chunk where there is one); ids of 32 letters and digits; a tool call's first delta carries its id, its name and the opening { of its arguments",
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
    ...PLAIN,
    // vllm/entrypoints/harmony_utils.py (parse_chat_input_to_harmony_message) reads an assistant
    // message's analysis from `reasoning` alone; any other field is ignored, never refused.
    reasoningInput: ["reasoning"],
    unauthorized: {
      status: 401,
      body: { error: "Unauthorized" },
      source:
        'vllm-project/vllm vllm/entrypoints/openai/api_server.py (the --api-key middleware answers JSONResponse(content={"error": "Unauthorized"}, status_code=401))',
    },
    notFound: () => ({
      status: 404,
      body: { detail: "Not Found" },
      source: "FastAPI's default 404 body; vLLM's OpenAI server is a FastAPI app (vllm/entrypoints/openai/api_server.py)",
    }),
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
      logprobs: true,
      argumentsOpen: false,
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
    ...PLAIN,
    unauthorized: unauthorizedIn("LM Studio", lmstudioError("Invalid API key")),
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
      logprobs: true,
      argumentsOpen: false,
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
    // ollama/ollama server/routes.go (PsHandler) and api/types.go (ProcessModelResponse): each loaded
    // model with the window it was loaded with; a bare name is listed under its :latest tag.
    loadedModels: (id, window) => {
      const name = id.includes(":") ? id : `${id}:latest`;
      return {
        models: [
          {
            name,
            model: name,
            size: 5_137_025_024,
            digest: "a2af6cc3eb7fa8be8504abaf9b04e88f17a119ec3f04a3addf55f92841195f5a",
            details: { parent_model: "", format: "gguf", family: "llama", families: ["llama"], parameter_size: "8.0B", quantization_level: "Q4_K_M" },
            expires_at: new Date(Date.now() + 300_000).toISOString(),
            size_vram: 5_137_025_024,
            context_length: window,
          },
        ],
      };
    },
    ...PLAIN,
    unauthorized: unauthorizedIn("Ollama", ollamaError("unauthorized", "invalid_request_error")),
    notFound: () => ({
      status: 404,
      body: "404 page not found",
      source: "gin's default 404 body (gin-gonic/gin gin.go default404Body); Ollama's server is a gin router (ollama/ollama server/routes.go)",
    }),
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
      logprobs: true,
      argumentsOpen: false,
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
    ...PLAIN,
    unauthorized: unauthorizedIn("OpenRouter", openrouterError(401, "No auth credentials found")),
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
      logprobs: true,
      argumentsOpen: false,
      toolCallIndexes: "each",
      callIdOnEveryChunk: false,
      source:
        'https://openrouter.ai/docs/api_reference/streaming (": OPENROUTER PROCESSING" comments) and https://openrouter.ai/docs/use-cases/usage-accounting (usage always in the last message)',
    },
    refusals: WORDINGS.openrouter,
    fallbackError: (status, message) => openrouterError(status, message),
  },
  deepseek: {
    name: "deepseek",
    listing: deepseekListing,
    modelEntry: deepseekModelEntry,
    props: () => null,
    lmstudioModels: () => null,
    ...PLAIN,
    reasoningInput: ["reasoning_content"],
    check: deepseekCheck,
    unauthorized: unauthorizedIn("DeepSeek", deepseekError("Authentication Fails, Your api key is invalid", "authentication_error")),
    notFound: () => ({
      status: 404,
      body: deepseekError("Not Found"),
      source: "no public wording found; shaped like DeepSeek's other errors",
    }),
    stream: {
      roleChunk: true,
      reasoningField: "reasoning_content",
      roleOnEveryChunk: false,
      usageInStream: "when-asked",
      usageOnFinalChunk: false,
      timings: false,
      cachedAlways: false,
      leadingComments: [],
      idPrefix: "",
      logprobs: true,
      fingerprint: "fp_loopback_prod",
      argumentsOpen: false,
      toolCallIndexes: "each",
      callIdOnEveryChunk: false,
      source:
        "api-docs.deepseek.com/guides/thinking_mode (the thinking streamed as reasoning_content deltas before the content) and the chunk shape quoted in https://github.com/nowledge-co/nowledge-mem/issues/36 (Delta(reasoning_content=..., content=None)); usage only under stream_options.include_usage",
    },
    refusals: WORDINGS.deepseek,
    fallbackError: (_status, message, type) => deepseekError(message, type),
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
