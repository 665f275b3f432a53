/**
 * @module testing/wording-samples
 * Real refusals beyond the one each family answers with, each quoted from the public thread or
 * file named in its `source`, for tests that must recognise every known wording.
 */
import type { ProfileName, RefusalKind } from "./profile-types.js";
import { deepFreeze, llamaError, ollamaError, openaiError, openrouterError } from "./refusal-wordings.js";
import { DEEPSEEK_PASS_BACK, deepseekError } from "./refusal-wordings-replay.js";

/**
 * What a sample is that no loopback refusal imitates: a rate limit on requests, an overloaded
 * server, a runner that crashed, a model too big for the machine, a quota spent.
 */
export type SampleOnlyKind = "rateLimit" | "overloaded" | "runnerCrash" | "outOfMemory" | "quotaSpent";

/** Every sample-only kind, in a stable order, for tests that walk them all. */
export const SAMPLE_ONLY_KINDS: readonly SampleOnlyKind[] = Object.freeze(["rateLimit", "overloaded", "runnerCrash", "outOfMemory", "quotaSpent"]);

/**
 * How the classifiers must read a sample: `isOverflow`, `isModelLoading`, `isTransient` (a
 * retry), or none of the three.
 */
export type WordingClass = "overflow" | "loading" | "transient" | "none";

/** One refusal as a real server sent it, for tests that must recognise every known wording. */
export interface WordingSample {
  /** The refusal kind it is, or what else it is where no refusal kind fits. */
  kind: RefusalKind | SampleOnlyKind;
  /** How the classifiers read it. */
  expected: WordingClass;
  /** The loopback profile that imitates the server's family, where one does. */
  family?: ProfileName | undefined;
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
    expected: "none",
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
    expected: "none",
    server: "an OpenAI-compatible relay",
    status: 400,
    body: openaiError("Unknown parameter: 'stream_options'.", "invalid_request_error", "stream_options", "unknown_parameter"),
    source: "https://github.com/QuantumNous/new-api/issues/418",
  },
  {
    kind: "streamOptions",
    expected: "none",
    server: "vLLM (stream_options on a request that does not stream)",
    status: 400,
    body: { object: "error", message: "Stream options can only be defined when `stream=True`.", type: "BadRequestError", param: null, code: 400 },
    source: "vllm-project/vllm vllm/entrypoints/openai/protocol.py (validate_stream_options)",
  },
  {
    kind: "strict",
    expected: "none",
    server: "RouteLLM",
    status: 400,
    body: 'Validation Error: "strict" - Extra inputs are not permitted',
    source: "https://github.com/earendil-works/pi/issues/1172",
  },
  {
    kind: "strict",
    expected: "none",
    server: "Databricks model serving",
    status: 400,
    body: { error_code: "BAD_REQUEST", message: '{"message":"tools.0.custom.strict: Extra inputs are not permitted"}' },
    source: "https://github.com/databricks/databricks-ai-bridge/pull/269",
  },
  {
    kind: "strict",
    expected: "none",
    server: "xAI",
    status: 400,
    body: { code: "Client specified an invalid argument", error: "Invalid request content: `strict` mode on function call is currently not supported." },
    source: "https://github.com/livekit/agents/issues/2253",
  },
  {
    kind: "strict",
    expected: "none",
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
    expected: "none",
    server: "Ollama 0.2 (OpenAI-compatible route)",
    status: 400,
    body: ollamaError("stablelm2:latest does not support tools"),
    source: "https://github.com/ollama/ollama/issues/6027",
  },
  {
    kind: "tools",
    expected: "none",
    server: "Ollama (native route)",
    status: 400,
    body: { error: "registry.ollama.ai/library/Qwen3.5:0.8b does not support tools" },
    source: "https://github.com/ollama/ollama/issues/14795",
  },
  {
    kind: "tools",
    expected: "none",
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
    expected: "none",
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
    expected: "none",
    server: "GitHub Copilot API",
    status: 400,
    body: "Unrecognized request argument supplied: reasoning_effort",
    source: "https://github.com/formulahendry/wechat-acp/issues/16",
  },
  {
    kind: "reasoningEffort",
    expected: "none",
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
    expected: "none",
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
    expected: "none",
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
    expected: "none",
    server: "OpenAI",
    status: 400,
    body: openaiError("Unrecognized request argument supplied: thinking", "invalid_request_error", null, null),
    source: "https://github.com/nashsu/llm_wiki/issues/336",
  },
  {
    kind: "responseFormat",
    expected: "none",
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
    expected: "none",
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
    expected: "overflow",
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
    expected: "overflow",
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
    expected: "overflow",
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
    expected: "overflow",
    server: "Zhipu GLM / Z.AI (numeric code 1261)",
    status: 400,
    body: { error: { code: "1261", message: "Prompt exceeds max length" } },
    source: "https://github.com/zeroclaw-labs/zeroclaw/issues/4124",
  },
  {
    kind: "contextOverflow",
    expected: "overflow",
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
    expected: "overflow",
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
    expected: "overflow",
    server: "Hugging Face TGI (prompt alone, max_input_length)",
    status: 422,
    body: { error: "Input validation error: `inputs` must have less than 1024 tokens. Given: 1168", error_type: "validation" },
    source: "https://github.com/huggingface/text-generation-inference/issues/695 (the message as quoted there, in TGI's { error, error_type } body)",
  },
  {
    kind: "contextOverflow",
    expected: "overflow",
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
    expected: "overflow",
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
    expected: "transient",
    server: "OpenAI (a dated model under a family limit)",
    status: 429,
    body: "429 Request too large for gpt-4.1-2025-04-14 (for limit gpt-4.1) in organization org-lFXO45OIovvTfxhxkzQlewnD on tokens per min (TPM): Limit 30000, Requested 37313. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.",
    source: "https://github.com/continuedev/continue/issues/11717",
  },
  {
    kind: "requestTooLarge",
    expected: "transient",
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
    expected: "none",
    server: "llama.cpp",
    status: 400,
    body: llamaError(400, "Assistant response prefill is incompatible with enable_thinking.", "invalid_request_error"),
    source: "https://github.com/ggml-org/llama.cpp/issues/20861",
  },
  {
    kind: "runnerCrash",
    expected: "none",
    family: "ollama",
    server: "Ollama (the llama runner died loading the model)",
    status: 500,
    body: { error: "llama runner process has terminated: exit status 2" },
    source: "https://github.com/ollama/ollama/issues/11775 (a 500 from POST /api/chat; the same words in issues 4775, 8770 and 9968)",
  },
  {
    kind: "runnerCrash",
    expected: "none",
    family: "ollama",
    server: "Ollama since llama-server replaced the runner (OpenAI-compatible route)",
    status: 500,
    body: ollamaError("llama-server process has terminated: exit status 2"),
    source: "ollama/ollama llm/llama_server.go (the load wait's error when the process exits; the exit status here is the one Ollama users report)",
  },
  {
    kind: "outOfMemory",
    expected: "none",
    family: "ollama",
    server: "Ollama (a model larger than the machine)",
    status: 500,
    body: { error: "model requires more system memory (5.3 GiB) than is available (3.3 GiB)" },
    source: "https://github.com/continuedev/continue/issues/11767 (status 500 as reported there; the words come from ollama/ollama server/sched.go)",
  },
  {
    kind: "overloaded",
    expected: "transient",
    family: "ollama",
    server: "Ollama (its request queue full, OLLAMA_MAX_QUEUE)",
    status: 503,
    body: { error: "server busy, please try again.  maximum pending requests exceeded" },
    source: "ollama/ollama server/sched.go (ErrMaxQueue) and server/routes.go (handleScheduleError answers it with a 503)",
  },
  {
    kind: "contextOverflow",
    expected: "overflow",
    family: "ollama",
    server: "Ollama (an embedding input over num_ctx with truncate: false)",
    status: 400,
    body: { error: "the input length exceeds the context length" },
    source: "ollama/ollama server/routes.go (EmbedHandler: a StatusError with 400; chat requests over num_ctx are truncated instead, server/prompt.go)",
  },
  {
    kind: "contextOverflow",
    expected: "overflow",
    family: "ollama",
    server: "Ollama with the llama-server runner and context shift off (a chat prompt over num_ctx)",
    status: 400,
    body: ollamaError(
      "the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length",
    ),
    source:
      "ollama/ollama llm/llama_server.go (completionPromptForRequest answers an api.StatusError with 400 when truncation is asked for but context shift is off; llm/llama_server_test.go checks the words)",
  },
  {
    kind: "contextOverflow",
    expected: "overflow",
    server: "SiliconFlow (numeric code 20015)",
    status: 400,
    body: { code: 20015, message: "length of prompt_tokens (68957) must be less than max_seq_len (65536).", data: null },
    source: "https://github.com/chatboxai/chatbox/issues/2060",
  },
  {
    kind: "contextOverflow",
    expected: "overflow",
    server: "Google Gemini API",
    status: 400,
    body: {
      error: {
        code: 400,
        message: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).",
        errors: [
          {
            message: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).",
            domain: "global",
            reason: "badRequest",
          },
        ],
        status: "INVALID_ARGUMENT",
      },
    },
    source: "https://github.com/google-gemini/gemini-cli/issues/6678",
  },
  {
    kind: "loading",
    expected: "loading",
    server: "Hugging Face serverless inference / Inference Endpoints (a cold model)",
    status: 503,
    body: { error: "Model meta-llama/Llama-2-13b-chat is currently loading", estimated_time: 20.0 },
    source:
      "https://github.com/huggingface/transformers/issues/32665 (the body as quoted there; the 503 is the status huggingface.js retries on, https://github.com/huggingface/huggingface.js/pull/554)",
  },
  {
    kind: "contextOverflow",
    expected: "overflow",
    server: "Moonshot / Kimi",
    status: 400,
    body: { error: { message: "Invalid request: Your request exceeded model token limit: 262144 (requested: 269030)", type: "invalid_request_error" } },
    source: "https://github.com/MoonshotAI/kimi-cli/issues/2011",
  },
  {
    kind: "contextOverflow",
    expected: "overflow",
    server: "Moonshot (max_tokens pushing the request over the window)",
    status: 400,
    body: { error: { message: "model max length exceeded, max length:8192" } },
    source: "https://github.com/MoonshotAI/MoonshotAI-Cookbook/issues/18 (the message as the title quotes it; the rest of the body was cut off there)",
  },
  {
    kind: "overloaded",
    expected: "transient",
    server: "Moonshot / Kimi (engine overloaded)",
    status: 429,
    body: { error: { message: "The engine is currently overloaded, please try again later", type: "engine_overloaded_error" } },
    source: "https://github.com/666ghj/BettaFish/issues/292",
  },
  {
    kind: "quotaSpent",
    expected: "none",
    server: "Moonshot / Kimi (balance spent, a 429)",
    status: 429,
    body: {
      error: {
        message:
          "Your account org-de5241b31b0345aca34d854a6743eacf <ak-f7azbgd8toki11ce3e1i> is suspended due to insufficient balance, please recharge your account or check your plan and billing details",
        type: "exceeded_current_quota_error",
      },
    },
    source: "https://github.com/666ghj/BettaFish/issues/524",
  },
  {
    kind: "contextOverflow",
    expected: "overflow",
    server: "Baidu Qianfan ERNIE (v1 API, an error inside a 200 stream)",
    status: 200,
    body: { error_code: 336003, error_msg: "the max length of current question is 2000", id: "as-fxhfe8n53r" },
    source: "guanguans/ai-commit app/Clients/Ernie.php (a stream error recorded in its doc comment)",
  },
  {
    kind: "rateLimit",
    expected: "transient",
    server: "Baidu Qianfan ERNIE (v1 API, QPS limit)",
    status: 200,
    body: { error_code: 18, error_msg: "Open api qps request limit reached" },
    source:
      "https://github.com/chatgpt-web-dev/chatgpt-web/issues/568 (code and words as Baidu's error-code table lists them, https://cloud.baidu.com/doc/WENXINWORKSHOP/s/tlmyncueh)",
  },
  {
    kind: "quotaSpent",
    expected: "none",
    server: "Baidu Qianfan ERNIE (v1 API, daily limit or billing not opened)",
    status: 200,
    body: { error_code: 17, error_msg: "Open api daily request limit reached" },
    source:
      "guanguans/ai-commit app/Clients/Ernie.php (an error recorded in its doc comment; Baidu's table, https://cloud.baidu.com/doc/WENXINWORKSHOP/s/tlmyncueh, reads it as a quota)",
  },
  {
    kind: "rateLimit",
    expected: "transient",
    server: "Baidu Qianfan (v2 OpenAI-compatible API, requests per minute)",
    status: 429,
    body: { error: { code: "rpm_rate_limit_exceeded", message: "Rate limit reached for RPM", type: "rate_limit_exceeded" }, id: "as-wbx23eriqh" },
    source: "https://github.com/PaddlePaddle/ERNIE/issues/1031",
  },
  {
    kind: "overloaded",
    expected: "transient",
    server: "Volcano Engine Ark (Doubao, server overloaded)",
    status: 429,
    body: {
      error: {
        code: "ServerOverloaded",
        message: "The service is currently unable to handle additional requests due to server overload. Please retry later. Request ID: 0217",
        param: "",
        type: "TooManyRequests",
      },
    },
    source:
      "https://www.volcengine.com/docs/82379/1299023 (Ark's error-code table; the request id filled in, the body in Ark's { error: { code, message, param, type } } shape)",
  },
  {
    kind: "rateLimit",
    expected: "transient",
    server: "Volcano Engine Ark (endpoint RPM)",
    status: 429,
    body: {
      error: {
        code: "RateLimitExceeded.EndpointRPMExceeded",
        message: "The Requests Per Minute (RPM) limit of the associated endpoint for your account has been exceeded. Request ID: 0217",
        param: "",
        type: "TooManyRequests",
      },
    },
    source: "https://www.volcengine.com/docs/82379/1299023 (Ark's error-code table; the request id filled in)",
  },
  {
    kind: "quotaSpent",
    expected: "none",
    server: "Volcano Engine Ark (free trial spent)",
    status: 429,
    body: {
      error: {
        code: "QuotaExceeded",
        message: "Your account [2100000000] has exhausted its free trial quota for the [doubao-seed-1-6] model. Request ID: 0217",
        param: "",
        type: "TooManyRequests",
      },
    },
    source: "https://www.volcengine.com/docs/82379/1299023 (Ark's error-code table; account, model and request id filled in)",
  },
  {
    kind: "contextOverflow",
    expected: "overflow",
    server: "Volcano Engine Ark (image and text over the window)",
    status: 400,
    body: { error: { code: "OutofContextError", message: "Total tokens of image and text exceed max message tokens.", param: "", type: "BadRequest" } },
    source: "https://www.volcengine.com/docs/82379/1299023 (Ark's error-code table)",
  },
  {
    kind: "overloaded",
    expected: "transient",
    server: "Hugging Face TGI (queue full)",
    status: 429,
    body: { error: "Model is overloaded", error_type: "overloaded" },
    source: "huggingface/text-generation-inference router/src/server.rs (InferError::Overloaded answered with 429; the body as its OpenAPI example gives it)",
  },
  {
    kind: "maxTokensValue",
    expected: "none",
    server: "Hugging Face TGI (a reply ceiling over max_total_tokens, not an overflow)",
    status: 422,
    body: { error: "Input validation error: `max_new_tokens` must be <= 4096. Given: 8000", error_type: "validation" },
    source: "huggingface/text-generation-inference router/src/validation.rs (ValidationError::MaxNewTokens; the numbers filled in)",
  },
  {
    kind: "reasoningEffort",
    expected: "none",
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
    expected: "none",
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
    expected: "none",
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
    expected: "none",
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
  {
    kind: "reasoningMissing",
    expected: "none",
    family: "deepseek",
    server: "DeepSeek V4 in thinking mode (a tool-call turn sent back without its reasoning)",
    status: 400,
    body: deepseekError(DEEPSEEK_PASS_BACK),
    source: "https://github.com/JohnnyZ93/oai-compatible-copilot/issues/215",
  },
  {
    kind: "reasoningMissing",
    expected: "none",
    family: "deepseek",
    server: "DeepSeek deepseek-reasoner (the message named by its index)",
    status: 400,
    body: deepseekError(
      "Missing `reasoning_content` field in the assistant message at message index 2. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
    ),
    source: "https://github.com/abhigyanpatwari/GitNexus/issues/43",
  },
  {
    kind: "reasoningField",
    expected: "none",
    server: "Groq (gpt-oss-120b, reasoning_content on an input message)",
    status: 400,
    body: {
      error: {
        message: "'messages.1' : for 'role:assistant' the following must be satisfied[('messages.1' : property 'reasoning_content' is unsupported)]",
        type: "invalid_request_error",
      },
    },
    source: "https://github.com/janhq/jan/issues/8136",
  },
  {
    kind: "systemNotFirst",
    expected: "none",
    family: "llama.cpp",
    server: "llama.cpp with Qwen 3.5 (the template exception while building the parser, as a 400)",
    status: 400,
    body: llamaError(
      400,
      "Unable to generate parser for this template. Automatic parser generation failed: \n------------\nWhile executing CallExpression at line 85, column 32 in source:\n...first %}↵            {{- raise_exception('System message must be at the beginnin...\n                                           ^\nError: Jinja Exception: System message must be at the beginning.",
      "invalid_request_error",
    ),
    source: "https://github.com/ggml-org/llama.cpp/issues/20733",
  },
  {
    kind: "toolCallReasoning",
    expected: "none",
    server: "SiliconFlow serving Kimi K2.5 (its own error body)",
    status: 400,
    body: { code: 20015, message: "thinking is enabled but reasoning_content is missing in assistant tool call message at index 32", data: null },
    source: "https://github.com/agentscope-ai/QwenPaw/issues/433",
  },
  {
    kind: "toolCallId",
    expected: "none",
    server: "Mistral La Plateforme (an id with a dash)",
    status: 400,
    body: {
      object: "error",
      message: "Tool call id was 2968-LWy3uasib but must be a-z, A-Z, 0-9, with a length of 9.",
      type: "invalid_function_call",
      param: null,
      code: "3280",
    },
    source: "https://github.com/editor-code-assistant/eca/issues/233",
  },
]);
