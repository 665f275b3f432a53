/**
 * @module testing/wording-samples
 * Real refusals beyond the one each family answers with, each quoted from the public thread or
 * file named in its `source`, for tests that must recognise every known wording.
 */
import type { RefusalKind } from "./profile-types.js";
import { deepFreeze, llamaError, ollamaError, openaiError, openrouterError } from "./wordings.js";

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
    body: {
      object: "error",
      message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
      type: "BadRequestError",
      param: null,
      code: 400,
    },
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
    body: llamaError(
      400,
      'JSON schema conversion failed:\nUnrecognized schema: {"description":"Arguments for the tool (JSON object)"}',
      "invalid_request_error",
    ),
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
    server: "Zhipu GLM / Z.AI (numeric code 1261)",
    status: 400,
    body: { error: { code: "1261", message: "Prompt exceeds max length" } },
    source: "https://github.com/zeroclaw-labs/zeroclaw/issues/4124",
  },
  {
    kind: "contextOverflow",
    server: "Alibaba DashScope (OpenAI-compatible mode)",
    status: 400,
    body: openaiError(
      "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 983616]",
      "invalid_request_error",
      null,
      "invalid_parameter_error",
    ),
    source: "https://github.com/agentscope-ai/QwenPaw/issues/6255",
  },
  {
    kind: "contextOverflow",
    server: "Hugging Face TGI (prompt plus max_new_tokens)",
    status: 422,
    body: {
      error: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. Given: 1244 `inputs` tokens and 1000 `max_new_tokens`",
      error_type: "validation",
    },
    source: "https://github.com/huggingface/text-generation-inference/issues/628 (the message as quoted there, in TGI's { error, error_type } body)",
  },
  {
    kind: "contextOverflow",
    server: "Hugging Face TGI (prompt alone, max_input_length)",
    status: 422,
    body: { error: "Input validation error: `inputs` must have less than 1024 tokens. Given: 1168", error_type: "validation" },
    source: "https://github.com/huggingface/text-generation-inference/issues/695 (the message as quoted there, in TGI's { error, error_type } body)",
  },
  {
    kind: "contextOverflow",
    server: "llama.cpp when the error type was added (a 500)",
    status: 500,
    body: llamaError(
      500,
      "the request exceeds the available context size. try increasing the context size or enable context shift",
      "exceed_context_size_error",
      {
        n_prompt_tokens: 1407,
        n_ctx: 256,
      },
    ),
    source: "https://github.com/ggml-org/llama.cpp/pull/15780",
  },
  {
    kind: "overflowInStream",
    server: "llama.cpp (inside a 200 stream)",
    status: 200,
    body: llamaError(
      400,
      "the request exceeds the available context size. try increasing the context size or enable context shift",
      "exceed_context_size_error",
      {
        n_prompt_tokens: 14429,
        n_ctx: 8192,
      },
    ),
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
  {
    kind: "reasoningEffort",
    server: "Azure OpenAI (gpt-5.1, which names the field only in param)",
    status: 400,
    body: openaiError(
      "Invalid value: 'none'. Supported values are: 'low', 'medium', and 'high'.",
      "invalid_request_error",
      "reasoning_effort",
      "invalid_value",
    ),
    source: "https://github.com/BerriAI/litellm/issues/16704",
  },
  {
    kind: "reasoningEffortWithTools",
    server: "OpenAI (gpt-5.5, one of many hosts relaying it)",
    status: 400,
    body: openaiError(
      "Function tools with reasoning_effort are not supported for gpt-5.5 in /v1/chat/completions. Please use /v1/responses instead.",
      "invalid_request_error",
      "reasoning_effort",
      null,
    ),
    source: "https://github.com/charmbracelet/crush/issues/2913 (message; body shape as in https://github.com/pipecat-ai/pipecat/issues/4043)",
  },
  {
    kind: "reasoningEffortWithTools",
    server: "OpenAI (gpt-5.6, newer wording)",
    status: 400,
    body: openaiError(
      "Function tools with reasoning_effort are not supported for gpt-5.6-terra in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.",
      "invalid_request_error",
      "reasoning_effort",
      null,
    ),
    source: "https://github.com/GEMISIS/leviath/issues/333",
  },
  {
    kind: "parallelToolCallsWithoutTools",
    server: "OpenAI",
    status: 400,
    body: openaiError(
      "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.",
      "invalid_request_error",
      "parallel_tool_calls",
      null,
    ),
    source: "https://github.com/openai/openai-openapi/pull/287",
  },
]);
