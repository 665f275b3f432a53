/**
 * @module testing/refusal-wordings-openai
 * OpenAI's refusal wordings for the loopback endpoint, with the helpers every family's table
 * shares (freezing, list quoting, the error body shapes).
 *
 * Every entry gives the HTTP status, builds the body from the request's details, and names its
 * source: a file in the server's repository or an issue thread where the body was quoted. An
 * entry marked `invented` has no public wording behind it; it is shaped like the family's other
 * errors so a test can still exercise the path, and says so.
 */
import type { RefusalDetail, RefusalKind, RefusalWording } from "./profile-types.js";

/** A refusal's details with the model filled in. @internal */
export type Filled = RefusalDetail & { model: string };
/** Freezes a value and everything reachable from it, so shared tables cannot be changed by a test. @internal */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value as Record<string, unknown>)) deepFreeze(inner);
  }
  return value;
}
/** One family's wordings by refusal kind. @internal */
export type Table = Partial<Record<RefusalKind, RefusalWording>>;

/** The efforts OpenAI names as supported when it refuses one. @internal */
export const OPENAI_EFFORTS: readonly string[] = Object.freeze(["minimal", "low", "medium", "high"]);

/** Quotes a list the way OpenAI's value refusals do: 'a', 'b', and 'c'. */
export function quoteList(values: readonly string[]): string {
  const quoted = values.map((value) => `'${value}'`);
  if (quoted.length <= 1) return quoted.join("");
  if (quoted.length === 2) return `${quoted[0]} and ${quoted[1]}`;
  return `${quoted.slice(0, -1).join(", ")}, and ${quoted[quoted.length - 1]}`;
}

/** The prompt size a wording quotes, or a plausible default. @internal */
export function promptOf(detail: Filled, fallback: number): number {
  return detail.promptTokens ?? fallback;
}

// ---------------------------------------------------------------------------------------------
// OpenAI: { error: { message, type, param, code } }
// ---------------------------------------------------------------------------------------------

/** OpenAI's error body. */
export function openaiError(message: string, type: string, param: string | null, code: string | null): unknown {
  return { error: { message, type, param, code } };
}

/** OpenAI's refusal wordings. @internal */
export const OPENAI_WORDINGS: Table = {
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
    body: () => openaiError("Unsupported parameter: 'tools' is not supported with this model.", "invalid_request_error", "tools", "unsupported_parameter"),
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
    source: "https://github.com/Kilo-Org/cloud/pull/3807 (message; an empty supported list leaves the list out); param and code as in the temperature refusal",
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
    body: ({ field }) => openaiError(`Unknown parameter: '${field ?? "min_p"}'.`, "invalid_request_error", field ?? "min_p", "unknown_parameter"),
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
      const asked = promptOf(detail, 8256);
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
        `Request too large for ${detail.model} in organization org-loopback on tokens per min (TPM): Limit ${detail.limit ?? 30000}, Requested ${promptOf(detail, 30601)}. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.`,
        "tokens",
        null,
        "rate_limit_exceeded",
      ),
    source: "https://github.com/DrShushen/climb/issues/13",
  },
  reasoningEffortWithTools: {
    status: 400,
    body: ({ model, supported }) =>
      openaiError(
        `Function tools with reasoning_effort are not supported for ${model} in /v1/chat/completions. ${
          supported?.includes("none") ? "To use function tools, use /v1/responses or set reasoning_effort to 'none'." : "Please use /v1/responses instead."
        }`,
        "invalid_request_error",
        "reasoning_effort",
        null,
      ),
    source:
      "https://github.com/pipecat-ai/pipecat/issues/4043 (gpt-5.4, body whole); the newer sentence offering 'none' in https://github.com/GEMISIS/leviath/issues/333, refused even without an effort per https://github.com/BerriAI/litellm/pull/34569",
  },
  parallelToolCallsWithoutTools: {
    status: 400,
    body: ({ field }) => {
      const name = field ?? "parallel_tool_calls";
      return openaiError(`Invalid value for '${name}': '${name}' is only allowed when 'tools' are specified.`, "invalid_request_error", name, null);
    },
    source: "https://github.com/openai/swarm/issues/30 and https://github.com/openai/openai-openapi/pull/287 (body whole)",
  },
  requestTooLarge: {
    status: 413,
    body: (detail) => ({
      error: {
        message: `Request too large for model \`${detail.model}\` in organization \`org_loopback\` service tier \`on_demand\` on tokens per minute (TPM): Limit ${detail.limit ?? 6000}, Requested ${promptOf(detail, 10338)}, please reduce your message size and try again. Visit https://console.groq.com/docs/rate-limits for more information.`,
        type: "tokens",
        code: "rate_limit_exceeded",
      },
    }),
    source: "Groq, an OpenAI-compatible host: https://github.com/cottongeeks/podscript/issues/20",
  },
};
