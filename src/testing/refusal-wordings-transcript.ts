/**
 * @module testing/refusal-wordings-transcript
 * The real words servers refuse a transcript's shape in: a system message past the first (Qwen
 * 3.5's chat template), a tool-call turn without the reasoning a thinking model wants back
 * (Kimi K2), a tool-call id of the wrong form (Mistral), a call without the signature its model
 * put on it (Gemini 3), and a message field the server does not know.
 */
import type { RefusalWording } from "./profile-types.js";

const TEMPLATE_SYSTEM_FIRST = "Jinja Exception: System message must be at the beginning.";

/** llama.cpp answering Qwen 3.5's template exception for a system message past the first, as a 500. */
export const LLAMA_SYSTEM_FIRST: RefusalWording = {
  status: 500,
  body: () => ({
    error: {
      code: 500,
      message: `\n------------\nWhile executing CallExpression in source:\n...raise_exception('System message must be at the beginnin...\nError: ${TEMPLATE_SYSTEM_FIRST}`,
      type: "server_error",
    },
  }),
  source:
    "https://github.com/nathaninline/ajean/issues/26 (llama-server returned 500 with a server_error and the Jinja exception) and https://github.com/ggml-org/llama.cpp/issues/20733 (the template's raise_exception, quoted)",
};

/** vLLM answering the same template exception as a 400 BadRequestError. */
export const VLLM_SYSTEM_FIRST: RefusalWording = {
  status: 400,
  body: () => ({ error: { message: "System message must be at the beginning.", type: "BadRequestError", param: null, code: 400 } }),
  source: "https://github.com/nashsu/llm_wiki/issues/45 (vLLM serving Qwen 3.5, the whole body)",
};

/** Kimi K2 in thinking mode refusing a tool-call turn without `reasoning_content`. */
export const KIMI_TOOL_CALL_REASONING: RefusalWording = {
  status: 400,
  body: (detail) => ({
    error: {
      type: "invalid_request_error",
      message: `thinking is enabled but reasoning_content is missing in assistant tool call message at index ${typeof detail.value === "number" ? detail.value : 2}`,
    },
    type: "error",
  }),
  source: "https://github.com/VicBilibily/GCMP/issues/162 (Kimi K2.6, the whole body) and https://github.com/mastra-ai/mastra/issues/12592 (kimi-k2.5)",
};

/** Mistral refusing a tool-call id that is not nine letters and digits. */
export const MISTRAL_TOOL_CALL_ID: RefusalWording = {
  status: 400,
  body: (detail) => ({
    object: "error",
    message: `Tool call id was ${typeof detail.value === "string" ? detail.value : "call_0"} but must be a-z, A-Z, 0-9, with a length of 9.`,
    type: "invalid_request_error",
    param: null,
    code: null,
  }),
  source: "https://github.com/jackmpcollins/magentic/issues/276 and https://github.com/langchain-ai/langchain/pull/24668 (the whole body)",
};

/** Gemini 3 refusing a replayed call without the thought signature it put on it. */
export const GEMINI_SIGNATURE_MISSING: RefusalWording = {
  status: 400,
  body: (detail) => ({
    error: {
      code: 400,
      message: `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${detail.name ?? "read"}\` , position ${typeof detail.value === "number" ? detail.value : 2}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
      status: "INVALID_ARGUMENT",
    },
  }),
  source:
    "https://github.com/earendil-works/pi/pull/3234 and https://github.com/ServiceNow/eva/pull/206 (Function call is missing a thought_signature in functionCall parts)",
};

/** A pydantic server refusing a field it does not know on a message or a call. */
export const MESSAGE_FIELD_FORBIDDEN: RefusalWording = {
  status: 400,
  body: (detail) => ({
    object: "error",
    message: `messages.${typeof detail.value === "number" ? detail.value : 1}.tool_calls.0.${detail.field ?? "extra_content"}: Extra inputs are not permitted`,
    type: "BadRequestError",
    param: null,
    code: 400,
  }),
  source:
    "the path-then-words shape of https://github.com/anthropics/claude-code/issues/4378 (messages.65.content.1.tool_use.text: Extra inputs are not permitted), spelled for a call field",
  invented: true,
};
