/**
 * @module testing/refusal-wordings
 * The refusal wordings of llama.cpp, vLLM, LM Studio, Ollama and OpenRouter, and the table of
 * every family's wordings the profiles read.
 *
 * Each entry names the public source its words were taken from; an entry marked `invented` has
 * none and says so.
 */
import type { ProfileName } from "./profile-types.js";
import { deepFreeze, OPENAI_WORDINGS, promptOf, type Filled, type Table } from "./refusal-wordings-openai.js";
import { DEEPSEEK_MISSING, GROQ_MESSAGE_FIELD, LLAMA_BOTH_CONTENT_AND_THINKING } from "./refusal-wordings-replay.js";
import {
  GEMINI_SIGNATURE_MISSING,
  KIMI_TOOL_CALL_REASONING,
  LLAMA_SYSTEM_FIRST,
  MESSAGE_FIELD_FORBIDDEN,
  MISTRAL_TOOL_CALL_ID,
  VLLM_SYSTEM_FIRST,
} from "./refusal-wordings-transcript.js";

export { deepFreeze, openaiError, quoteList } from "./refusal-wordings-openai.js";

// ---------------------------------------------------------------------------------------------
// llama.cpp: { error: { code, message, type } }, built by format_error_response in
// tools/server/server-common.cpp (ggml-org/llama.cpp).
// ---------------------------------------------------------------------------------------------

/** llama.cpp's error body. */
export function llamaError(code: number, message: string, type: string, extra: Record<string, unknown> = {}): unknown {
  return { error: { code, message, type, ...extra } };
}

function llamaOverflow(detail: Filled): unknown {
  const asked = promptOf(detail, 5000);
  const window = detail.window ?? 4096;
  return llamaError(400, `request (${asked} tokens) exceeds the available context size (${window} tokens), try increasing it`, "exceed_context_size_error", {
    n_prompt_tokens: asked,
    n_ctx: window,
  });
}

const llama: Table = {
  tools: {
    status: 500,
    body: () => llamaError(500, "tools param requires --jinja flag", "server_error"),
    source: "recorded from llama-server started with --no-jinja in test/fixtures/llama.cpp/no-jinja.json (--jinja is its default)",
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
        `Unable to generate parser for this template. Automatic parser generation failed: JSON schema conversion failed:\nUnrecognized schema: ${typeof value === "string" ? value : '{"description":"Arguments for the tool (JSON object)"}'}`,
        "invalid_request_error",
      ),
    source:
      "recorded from llama-server in test/fixtures/llama.cpp/refusals.json (unknownType); older builds answered the converter's words alone (https://github.com/browseros-ai/BrowserOS/issues/255, https://github.com/ggml-org/llama.cpp/issues/14227)",
  },
  contextOverflow: {
    status: 400,
    body: llamaOverflow,
    source:
      "ggml-org/llama.cpp tools/server/server-context.cpp (send_error with ERROR_TYPE_EXCEED_CONTEXT_SIZE) and server-task.cpp (server_task_result_error::to_json adds n_prompt_tokens, n_ctx); recorded in test/fixtures/llama.cpp/overflow.json",
  },
  overflowInStream: {
    status: 200,
    body: llamaOverflow,
    source:
      'ggml-org/llama.cpp tools/server/server.cpp (an error after the headers is sent as format_oai_sse(json {{ "error", ... }})); seen in https://github.com/oobabooga/textgen/issues/7257',
  },
  loading: {
    status: 503,
    body: () => llamaError(503, "Loading model", "unavailable_error"),
    source:
      'ggml-org/llama.cpp tools/server/server.cpp (middleware_server_state answers format_error_response("Loading model", ERROR_TYPE_UNAVAILABLE)), on every route while the model loads; recorded in test/fixtures/llama.cpp/loading.json',
  },
  prefill: {
    status: 400,
    body: () => llamaError(400, "Assistant response prefill is incompatible with enable_thinking.", "invalid_request_error"),
    source:
      "older builds only (https://github.com/ggml-org/llama.cpp/issues/20861): the recorded llama-server takes a prefill with a thinking template (test/fixtures/llama.cpp/reasoning.json, deepseekPrefill) and its binary no longer holds this sentence; a server started with --no-prefill-assistant reads the trailing message as a finished one instead",
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
      vllmError(`[{'type': 'extra_forbidden', 'loc': ('body', '${field ?? "min_p"}'), 'msg': 'Extra inputs are not permitted', 'input': None}]`),
    source: "releases before https://github.com/vllm-project/vllm/pull/10463 forbade extra fields",
  },
  contextOverflow: {
    status: 400,
    body: (detail) => {
      const window = detail.window ?? 4096;
      const asked = promptOf(detail, 5000);
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
        `Trying to keep the first ${promptOf(detail, 14538)} tokens when context the overflows. However, the model is loaded with context length of only ${detail.window ?? 2048} tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input`,
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
      const asked = promptOf(detail, 10535);
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
  // Groq answers in OpenAI's words and shape, so its refusal of a message field sits with OpenAI's.
  // Kimi, Mistral and Gemini answer in OpenAI-compatible shapes, so their wordings sit with OpenAI's.
  openai: {
    ...OPENAI_WORDINGS,
    reasoningField: GROQ_MESSAGE_FIELD,
    toolCallReasoning: KIMI_TOOL_CALL_REASONING,
    toolCallId: MISTRAL_TOOL_CALL_ID,
    callFieldMissing: GEMINI_SIGNATURE_MISSING,
    messageField: MESSAGE_FIELD_FORBIDDEN,
  },
  "llama.cpp": { ...llama, reasoningBoth: LLAMA_BOTH_CONTENT_AND_THINKING, systemNotFirst: LLAMA_SYSTEM_FIRST },
  vllm: { ...vllm, systemNotFirst: VLLM_SYSTEM_FIRST },
  lmstudio,
  ollama,
  openrouter,
  deepseek: { reasoningMissing: DEEPSEEK_MISSING },
});
