/**
 * @module endpoint-wordings
 * The refusal wordings of each server family, with the public source each was taken from.
 *
 * Every entry gives the HTTP status, builds the body from the request's details, and names its
 * source: a file in the server's repository or an issue thread where the body was quoted. An
 * entry marked `invented` has no public wording behind it; it is shaped like the family's other
 * errors so a test can still exercise the path, and says so.
 */
import type { ProfileName, RefusalDetail, RefusalKind, RefusalWording } from "./profiles.js";

type Filled = RefusalDetail & { model: string };

/** Freezes a value and everything reachable from it, so shared tables cannot be changed by a test. @internal */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value as Record<string, unknown>)) deepFreeze(inner);
  }
  return value;
}
type Table = Partial<Record<RefusalKind, RefusalWording>>;

const OPENAI_EFFORTS: readonly string[] = Object.freeze(["minimal", "low", "medium", "high"]);

/** Quotes a list the way OpenAI's value refusals do: 'a', 'b', and 'c'. */
export function quoteList(values: readonly string[]): string {
  const quoted = values.map((value) => `'${value}'`);
  if (quoted.length <= 1) return quoted.join("");
  if (quoted.length === 2) return `${quoted[0]} and ${quoted[1]}`;
  return `${quoted.slice(0, -1).join(", ")}, and ${quoted[quoted.length - 1]}`;
}

function prompt(detail: Filled, fallback: number): number {
  return detail.promptTokens ?? fallback;
}

// ---------------------------------------------------------------------------------------------
// OpenAI: { error: { message, type, param, code } }
// ---------------------------------------------------------------------------------------------

/** OpenAI's error body. */
export function openaiError(message: string, type: string, param: string | null, code: string | null): unknown {
  return { error: { message, type, param, code } };
}

const openai: Table = {
  streamOptions: {
    status: 400,
    body: () => openaiError("Unknown parameter: 'stream_options'.", "invalid_request_error", "stream_options", "unknown_parameter"),
    source: "https://github.com/QuantumNous/new-api/issues/418",
  },
  strict: {
    status: 400,
    body: ({ name }) =>
      openaiError(
        `Invalid schema for function '${name || "tool"}': In context=(), 'additionalProperties' is required to be supplied and to be false.`,
        "invalid_request_error",
        "tools[0].parameters",
        "invalid_function_parameters",
      ),
    source: "https://github.com/letta-ai/letta/issues/3137",
  },
  tools: {
    status: 400,
    body: () =>
      openaiError(
        "Unsupported parameter: 'tools' is not supported with this model.",
        "invalid_request_error",
        "tools",
        "unsupported_parameter",
      ),
    source: "no public wording found; shaped like OpenAI's unsupported_parameter refusals (see maxTokens)",
    invented: true,
  },
  reasoningEffort: {
    status: 400,
    body: ({ value, supported }) =>
      openaiError(
        `Unsupported value: 'reasoning_effort' does not support '${value ?? "none"}' with this model.${
          supported && supported.length === 0 ? "" : ` Supported values are: ${quoteList(supported ?? OPENAI_EFFORTS)}.`
        }`,
        "invalid_request_error",
        "reasoning_effort",
        "unsupported_value",
      ),
    source:
      "https://github.com/Kilo-Org/cloud/pull/3807 (message; an empty supported list leaves the list out); param and code as in the temperature refusal",
  },
  reasoningEffortUnsupported: {
    status: 400,
    body: () => openaiError("Unrecognized request argument supplied: reasoning_effort", "invalid_request_error", null, null),
    source: "https://github.com/coroot/coroot/issues/698",
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
    source: "https://github.com/griptape-ai/ComfyUI-Griptape/issues/312",
  },
  temperature: {
    status: 400,
    body: ({ value }) =>
      openaiError(
        `Unsupported value: 'temperature' does not support ${value ?? 0} with this model. Only the default (1) value is supported.`,
        "invalid_request_error",
        "temperature",
        "unsupported_value",
      ),
    source: "https://github.com/gabrii/Cursor-Azure-GPT-5/issues/33",
  },
  unknownField: {
    status: 400,
    body: ({ field }) => openaiError(`Unrecognized request argument supplied: ${field ?? "min_p"}`, "invalid_request_error", null, null),
    source: "https://github.com/xlinx/sd-webui-decadetw-auto-prompt-llm/issues/29",
  },
  unknownParameter: {
    status: 400,
    body: ({ field }) =>
      openaiError(`Unknown parameter: '${field ?? "min_p"}'.`, "invalid_request_error", field ?? "min_p", "unknown_parameter"),
    source: "https://github.com/QuantumNous/new-api/issues/418",
  },
  responseFormat: {
    status: 400,
    body: () =>
      openaiError(
        "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model. Learn more about supported models at the Structured Outputs guide: https://platform.openai.com/docs/guides/structured-outputs",
        "invalid_request_error",
        null,
        null,
      ),
    source: "https://github.com/langchain-ai/langchain/issues/31490",
  },
  invalidSchema: {
    status: 400,
    body: ({ name }) =>
      openaiError(
        `Invalid schema for response_format '${name || "response"}': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'b'.`,
        "invalid_request_error",
        "response_format",
        null,
      ),
    source: "https://github.com/vercel/ai/issues/6484 (message); body shape as OpenAI's other errors",
  },
  maxTokensValue: {
    status: 400,
    body: ({ value, ceiling }) =>
      openaiError(
        `max_tokens is too large: ${value ?? 8192}. This model supports at most ${ceiling ?? 4096} completion tokens, whereas you provided ${value ?? 8192}.`,
        "invalid_request_error",
        "max_tokens",
        null,
      ),
    source: "https://github.com/ChatGPTNextWeb/NextChat/issues/3195",
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
    source: "no public thread quoting it was found; the wording is OpenAI's range-check form as remembered",
    invented: true,
  },
  contextOverflow: {
    status: 400,
    body: (detail) => {
      const window = detail.window ?? 8192;
      const asked = prompt(detail, 8256);
      const ceiling = detail.completionTokens ?? 0;
      const message =
        ceiling > 0
          ? `This model's maximum context length is ${window} tokens. However, you requested ${asked + ceiling} tokens (${asked} in the messages, ${ceiling} in the completion). Please reduce the length of the messages or completion.`
          : `This model's maximum context length is ${window} tokens. However, your messages resulted in ${asked} tokens. Please reduce the length of the messages.`;
      return openaiError(message, "invalid_request_error", "messages", "context_length_exceeded");
    },
    source: "https://github.com/chathub-dev/chathub/issues/126 and https://github.com/ChatGPTNextWeb/NextChat/issues/3195",
  },
  rateLimitTokens: {
    status: 429,
    body: (detail) =>
      openaiError(
        `Request too large for ${detail.model} in organization org-loopback on tokens per min (TPM): Limit ${detail.limit ?? 30000}, Requested ${prompt(detail, 30601)}. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.`,
        "tokens",
        null,
        "rate_limit_exceeded",
      ),
    source: "https://github.com/DrShushen/climb/issues/13",
  },
  requestTooLarge: {
    status: 413,
    body: (detail) => ({
      error: {
        message: `Request too large for model \`${detail.model}\` in organization \`org_loopback\` service tier \`on_demand\` on tokens per minute (TPM): Limit ${detail.limit ?? 6000}, Requested ${prompt(detail, 10338)}, please reduce your message size and try again. Visit https://console.groq.com/docs/rate-limits for more information.`,
        type: "tokens",
        code: "rate_limit_exceeded",
      },
    }),
    source: "Groq, an OpenAI-compatible host: https://github.com/cottongeeks/podscript/issues/20",
  },
};

// ---------------------------------------------------------------------------------------------
// llama.cpp: { error: { code, message, type } }, built by format_error_response in
// tools/server/server-common.cpp (ggml-org/llama.cpp).
// ---------------------------------------------------------------------------------------------

/** llama.cpp's error body. */
export function llamaError(code: number, message: string, type: string, extra: Record<string, unknown> = {}): unknown {
  return { error: { code, message, type, ...extra } };
}

function llamaOverflow(detail: Filled): unknown {
  const asked = prompt(detail, 5000);
  const window = detail.window ?? 4096;
  return llamaError(
    400,
    `request (${asked} tokens) exceeds the available context size (${window} tokens), try increasing it`,
    "exceed_context_size_error",
    { n_prompt_tokens: asked, n_ctx: window },
  );
}

const llama: Table = {
  tools: {
    status: 500,
    body: () => llamaError(500, "tools param requires --jinja flag", "server_error"),
    source:
      "ggml-org/llama.cpp examples/server/utils.hpp (oaicompat_completion_params_parse throws it; the handler answers 500 server_error)",
  },
  responseFormat: {
    status: 500,
    body: () => llamaError(500, 'response_format type must be one of "text" or "json_object", but got: json_schema', "server_error"),
    source: "older builds, before ggml-org/llama.cpp#9527: https://github.com/ikawrakow/ik_llama.cpp/issues/778",
  },
  schemaGrammar: {
    status: 400,
    body: ({ value }) =>
      llamaError(
        400,
        `JSON schema conversion failed:\nUnrecognized schema: ${typeof value === "string" ? value : '{"description":"Arguments for the tool (JSON object)"}'}`,
        "invalid_request_error",
      ),
    source: "https://github.com/browseros-ai/BrowserOS/issues/255 and https://github.com/ggml-org/llama.cpp/issues/14227",
  },
  contextOverflow: {
    status: 400,
    body: llamaOverflow,
    source:
      "ggml-org/llama.cpp tools/server/server-context.cpp (send_error with ERROR_TYPE_EXCEED_CONTEXT_SIZE) and server-task.cpp (server_task_result_error::to_json adds n_prompt_tokens, n_ctx)",
  },
  overflowInStream: {
    status: 200,
    body: llamaOverflow,
    source:
      "ggml-org/llama.cpp tools/server/server.cpp (an error after the headers is sent as format_oai_sse(json {{ \"error\", ... }})); seen in https://github.com/oobabooga/textgen/issues/7257",
  },
  loading: {
    status: 503,
    body: () => llamaError(503, "Loading model", "unavailable_error"),
    source: "ggml-org/llama.cpp tools/server/server.cpp (middleware_server_state answers format_error_response(\"Loading model\", ERROR_TYPE_UNAVAILABLE))",
  },
  prefill: {
    status: 400,
    body: () => llamaError(400, "Assistant response prefill is incompatible with enable_thinking.", "invalid_request_error"),
    source: "https://github.com/ggml-org/llama.cpp/issues/20861",
  },
};

// ---------------------------------------------------------------------------------------------
// vLLM: { error: { message, type: "BadRequestError", param, code: 400 } } on current releases;
// releases before 0.10 sent the same fields flat with object: "error".
// ---------------------------------------------------------------------------------------------

/** vLLM's error body. */
export function vllmError(message: string, type = "BadRequestError", code = 400, param: string | null = null): unknown {
  return { error: { message, type, param, code } };
}

const vllm: Table = {
  tools: {
    status: 400,
    body: () => vllmError('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'),
    source: "https://github.com/vllm-project/vllm/issues/9986 and https://github.com/langchain4j/langchain4j/issues/3475",
  },
  streamOptions: {
    status: 400,
    body: () => vllmError("Stream options can only be defined when `stream=True`.", "BadRequestError", 400, "stream_options"),
    source: "vllm-project/vllm vllm/entrypoints/openai/protocol.py (ChatCompletionRequest.validate_stream_options)",
  },
  unknownField: {
    status: 400,
    body: ({ field }) =>
      vllmError(
        `[{'type': 'extra_forbidden', 'loc': ('body', '${field ?? "min_p"}'), 'msg': 'Extra inputs are not permitted', 'input': None}]`,
      ),
    source: "releases before https://github.com/vllm-project/vllm/pull/10463 forbade extra fields",
  },
  contextOverflow: {
    status: 400,
    body: (detail) => {
      const window = detail.window ?? 4096;
      const asked = prompt(detail, 5000);
      const ceiling = detail.completionTokens ?? 0;
      const message =
        asked >= window || ceiling === 0
          ? `This model's maximum context length is ${window} tokens. However, your request has ${asked} input tokens. Please reduce the length of the input messages.`
          : `'max_tokens' or 'max_completion_tokens' is too large: ${ceiling}. This model's maximum context length is ${window} tokens and your request has ${asked} input tokens (${ceiling} > ${window} - ${asked}).`;
      return vllmError(message);
    },
    source:
      "vllm-project/vllm vllm/entrypoints/openai/serving_engine.py (_validate_input); the older combined form is quoted in https://github.com/vllm-project/vllm/issues/20409",
  },
};

// ---------------------------------------------------------------------------------------------
// LM Studio: { error: "<message>" }
// ---------------------------------------------------------------------------------------------

/** LM Studio's error body. */
export function lmstudioError(message: string): unknown {
  return { error: message };
}

const lmstudio: Table = {
  contextOverflow: {
    status: 400,
    body: (detail) =>
      lmstudioError(
        `Trying to keep the first ${prompt(detail, 14538)} tokens when context the overflows. However, the model is loaded with context length of only ${detail.window ?? 2048} tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input`,
      ),
    source: "https://github.com/dyad-sh/dyad/issues/925 (body) and https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/237 (status 400)",
  },
};

// ---------------------------------------------------------------------------------------------
// Ollama (OpenAI-compatible /v1): { error: { message, type, param: null, code: null } }
// ---------------------------------------------------------------------------------------------

/** Ollama's error body on its OpenAI-compatible route. */
export function ollamaError(message: string, type = "api_error"): unknown {
  return { error: { message, type, param: null, code: null } };
}

const ollama: Table = {
  tools: {
    status: 400,
    body: ({ model }) => ollamaError(`registry.ollama.ai/library/${model} does not support tools`),
    source: "https://github.com/ollama/ollama/issues/6027 and https://github.com/louisho5/picobot/issues/6",
  },
};

// ---------------------------------------------------------------------------------------------
// OpenRouter: { error: { message, code, metadata? } }
// ---------------------------------------------------------------------------------------------

/** OpenRouter's error body. */
export function openrouterError(code: number, message: string, metadata?: Record<string, unknown>): unknown {
  return { error: { message, code, ...(metadata ? { metadata } : {}) } };
}

const openrouter: Table = {
  tools: {
    status: 404,
    body: () =>
      openrouterError(
        404,
        "No endpoints found that support tool use. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing",
      ),
    source: "https://github.com/evalstate/fast-agent/issues/122",
  },
  contextOverflow: {
    status: 400,
    body: (detail) => {
      const asked = prompt(detail, 10535);
      const ceiling = detail.completionTokens ?? 0;
      return openrouterError(
        400,
        `This endpoint's maximum context length is ${detail.window ?? 131072} tokens. However, you requested about ${asked + ceiling} tokens (${asked} of text input, ${ceiling} in the output). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.`,
        { provider_name: "Loopback" },
      );
    },
    source: "https://github.com/Aider-AI/aider/issues/3721",
  },
};

/** Every family's own wordings; a kind missing here falls back to a shaped stand-in. */
export const WORDINGS: Readonly<Record<ProfileName, Table>> = deepFreeze({
  openai,
  "llama.cpp": llama,
  vllm,
  lmstudio,
  ollama,
  openrouter,
});

/** One refusal as a real server sent it, for tests that must recognise every known wording. */
export interface WordingSample {
  /** The refusal kind it is. */
  kind: RefusalKind;
  /** Which server or host sent it. */
  server: string;
  /** The HTTP status it came with. */
  status: number;
  /** The body as quoted (re-spelled as JSON where the thread printed a Python dict). */
  body: unknown;
  /** The public thread or file it was quoted in. */
  source: string;
}

/**
 * Real refusals beyond the one each family answers with: other hosts, older releases, other
 * phrasings of the same refusal. A recogniser should read every one of these as its kind.
 */
export const WORDING_SAMPLES: readonly WordingSample[] = deepFreeze([
  {
    kind: "streamOptions",
    server: "Azure OpenAI",
    status: 400,
    body: openaiError(
      "Unrecognized request argument supplied: stream_options. Please contact us through an Azure support request.",
      "invalid_request_error",
      null,
      null,
    ),
    source: "https://github.com/songquanpeng/one-api/issues/1423",
  },
  {
    kind: "streamOptions",
    server: "an OpenAI-compatible relay",
    status: 400,
    body: openaiError("Unknown parameter: 'stream_options'.", "invalid_request_error", "stream_options", "unknown_parameter"),
    source: "https://github.com/QuantumNous/new-api/issues/418",
  },
  {
    kind: "streamOptions",
    server: "vLLM (stream_options on a request that does not stream)",
    status: 400,
    body: { object: "error", message: "Stream options can only be defined when `stream=True`.", type: "BadRequestError", param: null, code: 400 },
    source: "vllm-project/vllm vllm/entrypoints/openai/protocol.py (validate_stream_options)",
  },
  {
    kind: "strict",
    server: "RouteLLM",
    status: 400,
    body: 'Validation Error: "strict" - Extra inputs are not permitted',
    source: "https://github.com/earendil-works/pi/issues/1172",
  },
  {
    kind: "strict",
    server: "Databricks model serving",
    status: 400,
    body: { error_code: "BAD_REQUEST", message: '{"message":"tools.0.custom.strict: Extra inputs are not permitted"}' },
    source: "https://github.com/databricks/databricks-ai-bridge/pull/269",
  },
  {
    kind: "strict",
    server: "xAI",
    status: 400,
    body: { code: "Client specified an invalid argument", error: "Invalid request content: `strict` mode on function call is currently not supported." },
    source: "https://github.com/livekit/agents/issues/2253",
  },
  {
    kind: "strict",
    server: "OpenAI (a schema strict mode cannot take)",
    status: 400,
    body: openaiError(
      "Invalid schema for function 'my_tool': In context=('properties', 'fields'), 'additionalProperties' is required to be supplied and to be false.",
      "invalid_request_error",
      "tools[0].parameters",
      "invalid_function_parameters",
    ),
    source: "https://github.com/letta-ai/letta/issues/3137",
  },
  {
    kind: "tools",
    server: "Ollama 0.2 (OpenAI-compatible route)",
    status: 400,
    body: ollamaError("stablelm2:latest does not support tools"),
    source: "https://github.com/ollama/ollama/issues/6027",
  },
  {
    kind: "tools",
    server: "Ollama (native route)",
    status: 400,
    body: { error: "registry.ollama.ai/library/Qwen3.5:0.8b does not support tools" },
    source: "https://github.com/ollama/ollama/issues/14795",
  },
  {
    kind: "tools",
    server: "OpenRouter (newer wording)",
    status: 404,
    body: openrouterError(
      404,
      'No endpoints found that support tool use. Try disabling "question". To learn more about provider routing, visit: https://openrouter.ai/docs/guides/routing/provider-selection',
    ),
    source: "https://github.com/Kilo-Org/kilocode/issues/9006",
  },
  {
    kind: "tools",
    server: "vLLM before 0.10 (flat body)",
    status: 400,
    body: { object: "error", message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set', type: "BadRequestError", param: null, code: 400 },
    source: "https://github.com/langchain4j/langchain4j/issues/3475",
  },
  {
    kind: "reasoningEffortUnsupported",
    server: "GitHub Copilot API",
    status: 400,
    body: "Unrecognized request argument supplied: reasoning_effort",
    source: "https://github.com/formulahendry/wechat-acp/issues/16",
  },
  {
    kind: "reasoningEffort",
    server: "Cerebras",
    status: 400,
    body: {
      message:
        "1 validation error for ChatCompletionServerRequest\nreasoning_effort\n Input should be 'low', 'medium' or 'high' [type=enum, input_value='none', input_type=str]\n For further information visit https://errors.pydantic.dev/2.8/v/enum",
      type: "invalid_request_error",
      param: "validation_error",
      code: "wrong_api_format",
      id: "",
    },
    source: "https://github.com/egoist/chatwise-releases/issues/1325",
  },
  {
    kind: "maxTokens",
    server: "GitHub Copilot API",
    status: 400,
    body: {
      error: {
        message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        code: "invalid_request_body",
      },
    },
    source: "https://github.com/caozhiyuan/copilot-api/issues/164",
  },
  {
    kind: "temperature",
    server: "OpenAI (o1-mini)",
    status: 400,
    body: openaiError(
      "Unsupported value: 'temperature' does not support 0.0 with this model. Only the default (1) value is supported.",
      "invalid_request_error",
      "temperature",
      "unsupported_value",
    ),
    source: "https://github.com/OpenHands/OpenHands/issues/4131",
  },
  {
    kind: "unknownField",
    server: "OpenAI",
    status: 400,
    body: openaiError("Unrecognized request argument supplied: thinking", "invalid_request_error", null, null),
    source: "https://github.com/nashsu/llm_wiki/issues/336",
  },
  {
    kind: "responseFormat",
    server: "Volcano Engine Ark",
    status: 400,
    body: {
      error: {
        code: "InvalidParameter",
        message:
          "The parameter `response_format.type` specified in the request are not valid: invalid value: `json_schema`, supported values are: `json_object` and `text`.",
        param: "response_format.type",
        type: "BadRequest",
      },
    },
    source: "https://github.com/agno-agi/agno/issues/2553",
  },
  {
    kind: "schemaGrammar",
    server: "llama.cpp",
    status: 400,
    body: llamaError(400, 'JSON schema conversion failed:\nUnrecognized schema: {"description":"Arguments for the tool (JSON object)"}', "invalid_request_error"),
    source: "https://github.com/browseros-ai/BrowserOS/issues/255",
  },
  {
    kind: "contextOverflow",
    server: "OpenAI (with functions)",
    status: 400,
    body: openaiError(
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 202868 tokens (202767 in the messages, 101 in the functions). Please reduce the length of the messages or functions.",
      "invalid_request_error",
      "messages",
      "context_length_exceeded",
    ),
    source: "https://github.com/bytedance/deer-flow/issues/310",
  },
  {
    kind: "contextOverflow",
    server: "vLLM before 0.10 (flat body)",
    status: 400,
    body: {
      object: "error",
      message:
        "This model's maximum context length is 16384 tokens. However, you requested 19591 tokens (9591 in the messages, 10000 in the completion). Please reduce the length of the messages or completion. None",
      type: "BadRequestError",
      param: null,
      code: 400,
    },
    source: "https://github.com/vllm-project/vllm/issues/20409",
  },
  {
    kind: "contextOverflow",
    server: "OpenRouter (with tool input)",
    status: 400,
    body: openrouterError(
      400,
      'This endpoint\'s maximum context length is 65536 tokens. However, you requested about 92208 tokens (60833 of text input, 10042 of tool input, 21333 in the output). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.',
      { provider_name: null },
    ),
    source: "https://github.com/musistudio/claude-code-router/issues/252",
  },
  {
    kind: "contextOverflow",
    server: "llama.cpp when the error type was added (a 500)",
    status: 500,
    body: llamaError(500, "the request exceeds the available context size. try increasing the context size or enable context shift", "exceed_context_size_error", {
      n_prompt_tokens: 1407,
      n_ctx: 256,
    }),
    source: "https://github.com/ggml-org/llama.cpp/pull/15780",
  },
  {
    kind: "overflowInStream",
    server: "llama.cpp (inside a 200 stream)",
    status: 200,
    body: llamaError(400, "the request exceeds the available context size. try increasing the context size or enable context shift", "exceed_context_size_error", {
      n_prompt_tokens: 14429,
      n_ctx: 8192,
    }),
    source: "https://github.com/oobabooga/textgen/issues/7257",
  },
  {
    kind: "rateLimitTokens",
    server: "OpenAI (a dated model under a family limit)",
    status: 429,
    body: "429 Request too large for gpt-4.1-2025-04-14 (for limit gpt-4.1) in organization org-lFXO45OIovvTfxhxkzQlewnD on tokens per min (TPM): Limit 30000, Requested 37313. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.",
    source: "https://github.com/continuedev/continue/issues/11717",
  },
  {
    kind: "requestTooLarge",
    server: "Groq (newer wording)",
    status: 413,
    body: {
      error: {
        message:
          "Request too large for model llama-3.1-8b-instant in organization org_xxxxxxx service tier on_demand on tokens per minute (TPM): Limit 6000, Requested 12328, please reduce your message size and try again. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing",
        type: "tokens",
        code: "rate_limit_exceeded",
      },
    },
    source: "https://github.com/HunorLaczko/ha-groq-cloud-api/issues/27",
  },
  {
    kind: "prefill",
    server: "llama.cpp",
    status: 400,
    body: llamaError(400, "Assistant response prefill is incompatible with enable_thinking.", "invalid_request_error"),
    source: "https://github.com/ggml-org/llama.cpp/issues/20861",
  },
]);
