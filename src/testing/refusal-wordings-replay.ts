/**
 * @module testing/refusal-wordings-replay
 * The real words servers refuse replayed reasoning in: DeepSeek asking for `reasoning_content`
 * back, Groq refusing the field on an input message, and llama.cpp's gpt-oss template refusing
 * a tool-call message with both text and reasoning.
 */
import type { RefusalWording } from "./profile-types.js";

/** DeepSeek's error body (OpenAI's shape, with `code` repeating the type). */
export function deepseekError(message: string, type = "invalid_request_error"): unknown {
  return { error: { message, type, param: null, code: "invalid_request_error" } };
}

/** DeepSeek V4's words for a request whose history lacks the reasoning it wants back. */
export const DEEPSEEK_PASS_BACK = "The `reasoning_content` in the thinking mode must be passed back to the API.";

/**
 * DeepSeek refusing a thinking-mode request that lacks `reasoning_content`: deepseek-reasoner
 * names the message's index, the V4 models do not.
 */
export const DEEPSEEK_MISSING: RefusalWording = {
  status: 400,
  body: (detail) =>
    deepseekError(
      /reasoner/i.test(detail.model)
        ? `Missing \`reasoning_content\` field in the assistant message at message index ${typeof detail.value === "number" ? detail.value : 2}. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls`
        : DEEPSEEK_PASS_BACK,
    ),
  source:
    "https://github.com/JohnnyZ93/oai-compatible-copilot/issues/215 and https://github.com/earendil-works/pi/issues/3636 (V4, the whole body); https://github.com/abhigyanpatwari/GitNexus/issues/43 (deepseek-reasoner, with the message index)",
};

/**
 * Groq refusing a reasoning field on an input message: `reasoning_content` on any model, and
 * `reasoning` on a model that does not reason.
 */
export const GROQ_MESSAGE_FIELD: RefusalWording = {
  status: 400,
  body: (detail) => {
    const at = typeof detail.value === "number" ? detail.value : 1;
    const message =
      detail.field === "reasoning"
        ? `messages[${at}].reasoning: reasoning is not supported with this model`
        : `'messages.${at}' : for 'role:assistant' the following must be satisfied[('messages.${at}' : property '${detail.field ?? "reasoning_content"}' is unsupported)]`;
    return { error: { message, type: "invalid_request_error" } };
  },
  source:
    "https://github.com/janhq/jan/issues/8136 and https://github.com/NousResearch/hermes-agent/issues/11089 (property 'reasoning_content' is unsupported, gpt-oss-120b and llama-4-scout); https://github.com/vercel/ai/pull/8057 (reasoning is not supported with this model)",
};

/**
 * llama.cpp's gpt-oss template refusing a tool-call message with both text and reasoning:
 * common/chat.cpp hands the template `reasoning_content` as `thinking` on a message with tool
 * calls, and the template raises.
 */
export const LLAMA_BOTH_CONTENT_AND_THINKING: RefusalWording = {
  status: 500,
  // llama.cpp's format_error_response shape, written out here so this table stands alone.
  body: () => ({
    error: {
      code: 500,
      message: "Cannot pass both content and thinking in an assistant message with tool calls! Put the analysis message in one or the other, but not both.",
      type: "server_error",
    },
  }),
  source:
    "ggml-org/llama.cpp models/templates/openai-gpt-oss-120b.jinja (raise_exception on message.content and message.thinking) and common/chat.cpp (the gpt-oss init copies reasoning_content to thinking on a message with tool_calls); a template exception is answered as a 500 server_error",
};
