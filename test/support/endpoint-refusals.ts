/**
 * @module endpoint-refusals
 * Decides whether a chat request carries something the endpoint has been told to refuse, and
 * with which of the family's wordings.
 *
 * A refusal is answered before the script queue is touched, so a test that scripts one answer
 * and configures one refusal sees the request sent, refused, re-sent without the refused thing
 * and answered, and can assert exactly that on the recorded bodies.
 */
import type { Profile, RefusalDetail, RefusalKind } from "./profiles.js";

/** What a server, or one model on it, refuses. */
export interface RefusalRules {
  /** Refuse any `stream_options` field. */
  streamOptions?: boolean;
  /** Refuse `strict: true` on a tool's function or on a json_schema response format. */
  strict?: boolean;
  /** Refuse a non-empty `tools` array. */
  tools?: boolean;
  /**
   * Refuse `reasoning_effort`: `true` refuses the parameter itself (a model that takes no effort),
   * a list refuses those values and names the rest of `supportedEfforts` as what the model takes.
   */
  reasoningEffort?: boolean | string[];
  /** The efforts named as supported in a value refusal. @default ["minimal", "low", "medium", "high"] less the refused ones */
  supportedEfforts?: string[];
  /** Refuse `max_tokens` in favour of `max_completion_tokens`. */
  maxTokens?: boolean;
  /** Refuse any `temperature` but the default of 1. */
  temperature?: boolean;
  /** Refuse these top-level fields as unknown. */
  fields?: string[];
  /** Which wording an unknown field is refused in. @default "unrecognized" */
  fieldWording?: "unrecognized" | "unknown";
  /** Refuse a `response_format` of type json_schema. */
  responseFormat?: boolean;
  /**
   * Refuse a schema the grammar converter cannot build: `true` refuses any schema using one of
   * `not`, `if`, `then`, `else`, `dependentSchemas`, `unevaluatedProperties`; a list names the keywords.
   */
  schemaGrammar?: boolean | string[];
  /** Refuse every json_schema response format as an invalid schema (not something to negotiate away). */
  invalidSchema?: boolean;
  /** Refuse a reply ceiling (`max_tokens` or `max_completion_tokens`) above this value. */
  maxOutputTokens?: number;
  /** Refuse a temperature above this value. */
  temperatureMax?: number;
  /** Refuse a trailing assistant message (a prefill). */
  prefill?: boolean;
  /** Refuse a prompt larger than the endpoint's window (with the ceiling, for families that count it). */
  contextOverflow?: boolean;
  /** Answer the 429 that borrows overflow's words when the prompt and ceiling pass this many tokens. */
  tokensPerMinute?: number;
}

/** What a server refuses, and optionally what each model on it refuses on top. */
export interface RefusalConfig extends RefusalRules {
  /** Per model name: these rules apply to requests for that model, merged over the server's. */
  models?: Record<string, RefusalRules>;
}

/** A refusal found in a request. */
export interface FoundRefusal {
  kind: RefusalKind;
  detail: RefusalDetail;
}

const OPENAI_EFFORTS = ["minimal", "low", "medium", "high"];
const UNBUILDABLE = ["not", "if", "then", "else", "dependentSchemas", "unevaluatedProperties"];

/** Families that weigh the reply ceiling along with the prompt when checking the window. */
const COUNTS_CEILING = new Set(["openai", "vllm", "openrouter"]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function rulesFor(config: RefusalConfig | undefined, model: unknown): RefusalRules {
  if (!config) return {};
  const { models, ...server } = config;
  const own = typeof model === "string" ? models?.[model] : undefined;
  return { ...server, ...own };
}

function functionsOf(tools: unknown): Record<string, unknown>[] {
  if (!Array.isArray(tools)) return [];
  return tools.filter(isRecord).map((tool) => (isRecord(tool.function) ? tool.function : tool));
}

function jsonSchemaFormat(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const format = body.response_format;
  if (!isRecord(format) || format.type !== "json_schema") return undefined;
  return isRecord(format.json_schema) ? format.json_schema : {};
}

function usesKeyword(schema: unknown, keywords: readonly string[], depth = 0): boolean {
  if (depth > 64) return false;
  if (Array.isArray(schema)) return schema.some((item) => usesKeyword(item, keywords, depth + 1));
  if (!isRecord(schema)) return false;
  for (const [key, value] of Object.entries(schema)) {
    if (keywords.includes(key)) return true;
    if (key !== "properties" && key !== "$defs" && key !== "definitions") {
      if (usesKeyword(value, keywords, depth + 1)) return true;
    } else if (isRecord(value)) {
      for (const inner of Object.values(value)) if (usesKeyword(inner, keywords, depth + 1)) return true;
    }
  }
  return false;
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
    const schemas = [format?.schema, ...tools.map((fn) => fn.parameters)];
    if (schemas.some((schema) => usesKeyword(schema, keywords))) return { kind: "schemaGrammar", detail: {} };
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
    if (isRecord(last) && last.role === "assistant") return { kind: "prefill", detail: {} };
  }
  const counted = sizes.promptTokens + (COUNTS_CEILING.has(profile.name) ? (ceiling ?? 0) : 0);
  if (rules.contextOverflow && profile.name !== "ollama" && counted > sizes.window) {
    return {
      kind: "contextOverflow",
      detail: { promptTokens: sizes.promptTokens, completionTokens: ceiling ?? 0, window: sizes.window },
    };
  }
  if (rules.tokensPerMinute !== undefined && sizes.promptTokens + (ceiling ?? 0) > rules.tokensPerMinute) {
    return { kind: "rateLimitTokens", detail: { limit: rules.tokensPerMinute, promptTokens: sizes.promptTokens + (ceiling ?? 0) } };
  }
  return undefined;
}
