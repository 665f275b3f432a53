/**
 * @module testing/refusal-rules
 * Decides whether a chat request carries something the endpoint has been told to refuse, and
 * with which of the family's wordings.
 *
 * A refusal is answered before the script queue is touched, so a test that scripts one answer
 * and configures one refusal sees the request sent, refused, re-sent without the refused thing
 * and answered, and can assert exactly that on the recorded bodies.
 */
import type { Profile, RefusalDetail, RefusalKind } from "./profile-types.js";
import { isPlainRecord } from "./guards.js";
import { missingReasoningAt } from "./profile-deepseek.js";
import { shapeRefusal } from "./refusal-rules-transcript.js";

/** What a server, or one model on it, refuses. */
export interface RefusalRules {
  /** Refuse any `stream_options` field. */
  streamOptions?: boolean | undefined;
  /** Refuse `strict: true` on a tool's function or on a json_schema response format. */
  strict?: boolean | undefined;
  /** Refuse a non-empty `tools` array. */
  tools?: boolean | undefined;
  /**
   * Refuse `reasoning_effort`: `true` refuses the parameter itself (a model that takes no effort),
   * a list refuses those values and names the rest of `supportedEfforts` as what the model takes.
   */
  reasoningEffort?: boolean | string[] | undefined;
  /**
   * The efforts named as supported in a value refusal; an empty list words the refusal without
   * naming any. @default ["minimal", "low", "medium", "high"] less the refused ones
   */
  supportedEfforts?: string[] | undefined;
  /** Refuse `max_tokens` in favour of `max_completion_tokens`. */
  maxTokens?: boolean | undefined;
  /** Refuse any `temperature` but the default of 1. */
  temperature?: boolean | undefined;
  /** Refuse these top-level fields as unknown. */
  fields?: string[] | undefined;
  /** Which wording an unknown field is refused in. @default "unrecognized" */
  fieldWording?: "unrecognized" | "unknown" | undefined;
  /** Refuse a `response_format` of type json_schema. */
  responseFormat?: boolean | undefined;
  /**
   * Refuse a schema the grammar converter cannot build: `true` refuses any schema using one of
   * `not`, `if`, `then`, `else`, `dependentSchemas`, `unevaluatedProperties`; a list names the keywords.
   */
  schemaGrammar?: boolean | string[] | undefined;
  /** Refuse every json_schema response format as an invalid schema (not something to negotiate away). */
  invalidSchema?: boolean | undefined;
  /** Refuse a reply ceiling (`max_tokens` or `max_completion_tokens`) above this value. */
  maxOutputTokens?: number | undefined;
  /** Refuse a temperature above this value. */
  temperatureMax?: number | undefined;
  /**
   * Refuse `reasoning_effort` beside a non-empty `tools`: `true` refuses any effort but "none"
   * and leaves a request without one alone (gpt-5.4's wording); `"unless-none"` refuses every
   * tool-carrying request whose effort is not "none", one without an effort included, since the
   * model reasons by default (gpt-5.6's wording, which offers "none").
   */
  reasoningEffortWithTools?: boolean | "unless-none" | undefined;
  /** Refuse these top-level fields in a request that declares no tools (OpenAI's `parallel_tool_calls`). */
  withoutTools?: string[] | undefined;
  /** Refuse a trailing assistant message (a prefill). */
  prefill?: boolean | undefined;
  /**
   * Refuse a prompt larger than the endpoint's window. OpenAI, vLLM and OpenRouter weigh the
   * prompt plus the reply ceiling; llama.cpp refuses a prompt that fills the window; Ollama never
   * refuses (it truncates), so the rule does nothing there.
   */
  contextOverflow?: boolean | undefined;
  /** Send the overflow as an error event inside a 200 stream when the request streams. */
  overflowInStream?: boolean | undefined;
  /** Answer the 429 that borrows overflow's words when the prompt and ceiling pass this many tokens. */
  tokensPerMinute?: number | undefined;
  /** Answer a request over `tokensPerMinute` with Groq's 413 instead of OpenAI's 429. @default 429 */
  tokensPerMinuteStatus?: 429 | 413 | undefined;
  /** Refuse these reasoning fields on an assistant message, in Groq's words. */
  messageFields?: ("reasoning_content" | "reasoning")[] | undefined;
  /** Refuse a tool-call message with both text and `reasoning_content`, as llama.cpp's gpt-oss template does. */
  contentWithReasoning?: boolean | undefined;
  /** While tools are declared, refuse any assistant message without `reasoning_content`, in DeepSeek V4's words. */
  reasoningEveryTurn?: boolean | undefined;
  /** Refuse a system message anywhere but first, as Qwen 3.5's chat template does. */
  systemNotFirst?: boolean | undefined;
  /** Refuse an assistant message with tool calls but no `reasoning_content`, in Kimi K2's thinking-mode words. */
  reasoningOnToolCalls?: boolean | undefined;
  /** Refuse a tool-call id (on a call or a tool message) that is not this many letters and digits, in Mistral's words (9). */
  toolCallIdLength?: number | undefined;
  /**
   * Refuse a replayed tool call that lacks this field (a dotted path, `extra_content.google.thought_signature`),
   * as Gemini 3 refuses a call without its thought signature.
   */
  callField?: string | undefined;
  /** Refuse these fields on any message or tool call, as a pydantic server refuses an extra input. */
  messageFieldsForbidden?: string[] | undefined;
}

/** What a server refuses, and optionally what each model on it refuses on top. */
export interface RefusalConfig extends RefusalRules {
  /** Per model name: these rules apply to requests for that model, merged over the server's. */
  models?: Record<string, RefusalRules> | undefined;
}

/** A refusal found in a request. */
export interface FoundRefusal {
  kind: RefusalKind;
  detail: RefusalDetail;
}

const OPENAI_EFFORTS: readonly string[] = Object.freeze(["minimal", "low", "medium", "high"]);
const UNBUILDABLE: readonly string[] = Object.freeze(["not", "if", "then", "else", "dependentSchemas", "unevaluatedProperties"]);

/** Whether a family weighs the reply ceiling along with the prompt when checking the window. */
function countsCeiling(profile: Profile): boolean {
  return profile.name === "openai" || profile.name === "vllm" || profile.name === "openrouter";
}

function rulesFor(config: RefusalConfig | undefined, model: unknown): RefusalRules {
  if (!config) return {};
  const { models, ...server } = config;
  const own = typeof model === "string" ? models?.[model] : undefined;
  return { ...server, ...own };
}

function functionsOf(tools: unknown): Record<string, unknown>[] {
  if (!Array.isArray(tools)) return [];
  return tools.filter(isPlainRecord).map((tool) => (isPlainRecord(tool.function) ? tool.function : tool));
}

function jsonSchemaFormat(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const format = body.response_format;
  if (!isPlainRecord(format) || format.type !== "json_schema") return undefined;
  return isPlainRecord(format.json_schema) ? format.json_schema : {};
}

/** Finds the first sub-schema using one of the keywords, skipping property and definition names. */
function findKeyword(schema: unknown, keywords: readonly string[], depth = 0): Record<string, unknown> | undefined {
  if (depth > 64) return undefined;
  if (Array.isArray(schema)) {
    for (const item of schema) {
      const found = findKeyword(item, keywords, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  if (!isPlainRecord(schema)) return undefined;
  for (const [key, value] of Object.entries(schema)) {
    if (keywords.includes(key)) return schema;
    const inner = key === "properties" || key === "$defs" || key === "definitions" ? (isPlainRecord(value) ? Object.values(value) : []) : value;
    const found = findKeyword(inner, keywords, depth + 1);
    if (found) return found;
  }
  return undefined;
}

function ceilingOf(body: Record<string, unknown>): number | undefined {
  const value = body.max_completion_tokens ?? body.max_tokens;
  return typeof value === "number" ? value : undefined;
}

/**
 * Finds the first thing in a chat request that the configuration refuses, checking in the order a
 * server validates a body: the fields it does not take, then the values it cannot honour, then
 * the size.
 *
 * @internal
 */
export function findRefusal(
  profile: Profile,
  config: RefusalConfig | undefined,
  body: Record<string, unknown>,
  sizes: { promptTokens: number; window: number },
): FoundRefusal | undefined {
  const rules = rulesFor(config, body.model);
  const tools = functionsOf(body.tools);
  const format = jsonSchemaFormat(body);

  if (rules.tools && tools.length > 0) return { kind: "tools", detail: {} };
  if (rules.streamOptions && "stream_options" in body) return { kind: "streamOptions", detail: { field: "stream_options" } };
  if (rules.strict) {
    const strictTool = tools.find((fn) => fn.strict === true);
    if (strictTool) return { kind: "strict", detail: { field: "strict", name: String(strictTool.name ?? "") } };
    if (format?.strict === true) return { kind: "strict", detail: { field: "strict", name: String(format.name ?? "") } };
  }
  for (const field of rules.fields ?? []) {
    if (field in body) {
      return { kind: rules.fieldWording === "unknown" ? "unknownParameter" : "unknownField", detail: { field } };
    }
  }
  if (rules.reasoningEffortWithTools && tools.length > 0 && body.reasoning_effort !== "none") {
    const offersNone = rules.reasoningEffortWithTools === "unless-none";
    if (offersNone || "reasoning_effort" in body) {
      const value = typeof body.reasoning_effort === "string" ? body.reasoning_effort : undefined;
      return { kind: "reasoningEffortWithTools", detail: { ...(value ? { value } : {}), ...(offersNone ? { supported: ["none"] } : {}) } };
    }
  }
  if (tools.length === 0) {
    for (const field of rules.withoutTools ?? []) if (field in body) return { kind: "parallelToolCallsWithoutTools", detail: { field } };
  }
  const replay = replayRefusal(rules, body);
  if (replay) return replay;
  const shape = shapeRefusal(rules, body);
  if (shape) return shape;
  if ("reasoning_effort" in body && rules.reasoningEffort) {
    const asked = body.reasoning_effort;
    if (rules.reasoningEffort === true) return { kind: "reasoningEffortUnsupported", detail: { field: "reasoning_effort" } };
    if (typeof asked === "string" && rules.reasoningEffort.includes(asked)) {
      const refused = rules.reasoningEffort;
      const supported = rules.supportedEfforts ?? OPENAI_EFFORTS.filter((effort) => !refused.includes(effort));
      return { kind: "reasoningEffort", detail: { value: asked, supported } };
    }
  }
  if (rules.maxTokens && "max_tokens" in body) return { kind: "maxTokens", detail: { field: "max_tokens" } };
  if (rules.temperature && body.temperature !== undefined && body.temperature !== 1) {
    return { kind: "temperature", detail: { value: body.temperature as number } };
  }
  if (format && rules.responseFormat) return { kind: "responseFormat", detail: { field: "response_format" } };
  if (rules.schemaGrammar) {
    const keywords = rules.schemaGrammar === true ? UNBUILDABLE : rules.schemaGrammar;
    const found = findKeyword([format?.schema, ...tools.map((fn) => fn.parameters)], keywords);
    if (found) return { kind: "schemaGrammar", detail: { value: JSON.stringify(found) } };
  }
  if (format && rules.invalidSchema) return { kind: "invalidSchema", detail: { name: String(format.name ?? "") } };
  const ceiling = ceilingOf(body);
  if (rules.maxOutputTokens !== undefined && ceiling !== undefined && ceiling > rules.maxOutputTokens) {
    return { kind: "maxTokensValue", detail: { value: ceiling, ceiling: rules.maxOutputTokens } };
  }
  if (rules.temperatureMax !== undefined && typeof body.temperature === "number" && body.temperature > rules.temperatureMax) {
    return { kind: "temperatureValue", detail: { value: body.temperature } };
  }
  if (rules.prefill && Array.isArray(body.messages)) {
    const last: unknown = body.messages[body.messages.length - 1];
    if (isPlainRecord(last) && last.role === "assistant") return { kind: "prefill", detail: {} };
  }
  const counted = sizes.promptTokens + (countsCeiling(profile) ? (ceiling ?? 0) : 0);
  const overflows = profile.name === "llama.cpp" ? sizes.promptTokens >= sizes.window : counted > sizes.window;
  if (rules.contextOverflow && profile.name !== "ollama" && overflows) {
    return {
      kind: rules.overflowInStream && body.stream === true ? "overflowInStream" : "contextOverflow",
      detail: { promptTokens: sizes.promptTokens, completionTokens: ceiling ?? 0, window: sizes.window },
    };
  }
  if (rules.tokensPerMinute !== undefined && sizes.promptTokens + (ceiling ?? 0) > rules.tokensPerMinute) {
    return {
      kind: rules.tokensPerMinuteStatus === 413 ? "requestTooLarge" : "rateLimitTokens",
      detail: { limit: rules.tokensPerMinute, promptTokens: sizes.promptTokens + (ceiling ?? 0) },
    };
  }
  return undefined;
}

function nonEmpty(value: unknown): boolean {
  return typeof value === "string" && value.trim() !== "";
}

/** The refusals of replayed reasoning a configuration asks for: a message field, text beside reasoning, a turn without it. */
function replayRefusal(rules: RefusalRules, body: Record<string, unknown>): FoundRefusal | undefined {
  const messages: unknown[] = Array.isArray(body.messages) ? body.messages : [];
  for (const [index, message] of messages.entries()) {
    if (!isPlainRecord(message) || message.role !== "assistant") continue;
    const field = (rules.messageFields ?? []).find((name) => name in message);
    if (field) return { kind: "reasoningField", detail: { field, value: index } };
    const calls = Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
    if (rules.contentWithReasoning && calls && nonEmpty(message.content) && nonEmpty(message.reasoning_content)) {
      return { kind: "reasoningBoth", detail: {} };
    }
  }
  if (rules.reasoningEveryTurn) {
    const at = missingReasoningAt(body, true);
    if (at >= 0) return { kind: "reasoningMissing", detail: { value: at } };
  }
  return undefined;
}
