/**
 * @module turn/side-task-json
 * The structured half of the side tasks: {@link askJsonIn}, which asks for an answer held to a
 * schema, and what it is built from: reading JSON out of a reply, turning the schema a caller
 * gives (JSON Schema or zod 4) into the `response_format` an attempt sends, and checking the
 * answer against a zod schema.
 */

import { safeParse, toJSONSchema, type $ZodType } from "zod/v4/core";
import type { EndpointCapabilities } from "../wire/capabilities.js";
import type { Endpoint, JsonSchema } from "../shapes/config.js";
import { isGrammarError, relaxSchema, sanitizeSchema } from "../text/schema-compat.js";
import type { AskJsonOptions, SideTaskInput, SideTaskSchema } from "./side-task-types.js";
import { ALL_FENCES, stripThinking } from "../text/thinking.js";
import { balancedEnd, findJson, parseLooseJson } from "../text/json-repair.js";
import { withinStrictLimits } from "../text/schema-strict-size.js";
import { isObject, toJson, type Json } from "../text/schema-tree.js";
import { notify } from "../text/safe-calls.js";
import {
  emptyReason,
  guarded,
  requestFor,
  SIDE_TASK_CEILINGS,
  sendSideTask,
  settingsOf,
  sideNotice,
  taskName,
  unsendable,
  type SideTaskAnswer,
  type SideTaskRequest,
} from "./side-task-request.js";
import type { RuntimeState } from "../state/state.js";
import { learnServerIn } from "../wire/capabilities-learn.js";

/**
 * Reads the JSON value in a model's reply; undefined where there is none or it was cut off.
 *
 * Fenced reasoning is taken out first. The value may be the whole reply, inside a ``` fence or
 * inside prose, and may carry the slips a local model makes (single quotes, Python's literals,
 * bare keys, trailing commas). A value that sits inside a bracket the reply never closed is not
 * taken, since that is a fragment of an answer cut off, not the answer.
 */
export function readJson(text: string): unknown {
  if (typeof text !== "string") return undefined;
  const answer = stripThinking(text, ALL_FENCES).content;
  const candidate = findJson(answer);
  if (candidate === undefined) {
    const whole = answer.trim();
    if (whole === "") return undefined;
    try {
      return JSON.parse(whole) as unknown;
    } catch {
      return undefined;
    }
  }
  const parsed = parseLooseJson(candidate);
  if (!parsed.ok) return undefined;
  const first = answer.search(/[{[]/);
  const at = answer.indexOf(candidate);
  if (first >= 0 && at > first && balancedEnd(answer, first) >= answer.length && !parseLooseJson(answer.slice(first).trim()).ok) {
    return undefined;
  }
  return parsed.value;
}

/** Whether a value is a zod 4 schema (classic or mini): it carries zod's `_zod` internals. */
export function isZodSchema(value: unknown): value is $ZodType {
  return typeof value === "object" && value !== null && "_zod" in value && typeof (value as { _zod?: unknown })._zod === "object";
}

/** Whether a value looks like a zod 3 schema, which this package cannot convert. */
function isOlderZod(value: unknown): boolean {
  return (
    typeof value === "object" && value !== null && !("_zod" in value) && "_def" in value && typeof (value as { safeParse?: unknown }).safeParse === "function"
  );
}

/** A schema ready to send: the caller's, its strict rewrite and its grammar-safe rewrite. */
export interface PreparedSchema {
  /** The schema as JSON Schema, as the caller wrote it (or zod converted it). */
  original: Json;
  /** The strict-mode rewrite. */
  strict: Json;
  /** Whether the strict rewrite can be sent strict: an object root within the size limits. */
  strictAllowed: boolean;
  /** The rewrite a grammar converter can compile. */
  relaxed: Json;
  /** The zod schema the answer is checked against, where one was given. */
  zod?: $ZodType | undefined;
}

/** Prepares a schema for sending, or says in words why it cannot be. */
export function prepareSchema(schema: unknown): PreparedSchema | { problem: string } {
  let original: Json;
  let zod: $ZodType | undefined;
  if (isZodSchema(schema)) {
    try {
      // The model writes what the schema parses, so its input side is the one to describe.
      original = toJson(toJSONSchema(schema, { io: "input", unrepresentable: "any" }));
    } catch (error) {
      return { problem: `the zod schema could not be converted to JSON Schema (${error instanceof Error ? error.message : String(error)})` };
    }
    if (isObject(original)) delete original.$schema;
    zod = schema;
  } else if (isOlderZod(schema)) {
    return { problem: "it was given a zod 3 schema; pass a zod 4 schema or a JSON Schema" };
  } else if (typeof schema === "boolean" || isObject(schema)) {
    original = toJson(schema);
  } else {
    return { problem: "its schema is neither a JSON Schema object nor a zod schema" };
  }
  const strict = toJson(sanitizeSchema(original as JsonSchema));
  const strictAllowed = isObject(strict) && strict.type === "object" && withinStrictLimits(strict);
  const relaxed = toJson(relaxSchema(original as JsonSchema));
  return zod ? { original, strict, strictAllowed, relaxed, zod } : { original, strict, strictAllowed, relaxed };
}

/** A `response_format` name OpenAI takes: letters, digits, `_` and `-`, at most 64. */
export function formatName(name: unknown): string {
  const cleaned = typeof name === "string" ? name.replace(/[^A-Za-z0-9_-]+/g, "_").slice(0, 64) : "";
  return cleaned === "" || /^_+$/.test(cleaned) ? "answer" : cleaned;
}

/**
 * The `response_format` one attempt sends: the strict rewrite marked strict while the endpoint
 * takes strict schemas, is not grammar-constrained and the caller asked for strict, otherwise the
 * grammar-safe rewrite, whose bounds a grammar-constrained server enforces.
 */
export function responseFormatFor(prepared: PreparedSchema, name: string, strict: boolean, supports: EndpointCapabilities): Record<string, unknown> {
  if (strict && supports.strictSchemas && supports.grammarConstrained !== true && prepared.strictAllowed) {
    return { type: "json_schema", json_schema: { name, schema: prepared.strict, strict: true } };
  }
  return { type: "json_schema", json_schema: { name, schema: prepared.relaxed } };
}

/** The sentence added to the system prompt, so a model held to no schema still knows the shape. */
export function schemaInstruction(prepared: PreparedSchema): string {
  return `Reply with JSON only, no other text, matching this JSON Schema:\n${JSON.stringify(prepared.original)}`;
}

/** A copy of a value with every null-valued object property left out, however deep. */
function withoutNulls(value: unknown, depth = 0): unknown {
  if (depth > 64) return value;
  if (Array.isArray(value)) return value.map((item) => withoutNulls(item, depth + 1));
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (item !== null) out[key] = withoutNulls(item, depth + 1);
  return out;
}

/** Where a zod check failed, in words: the first issue's path and message. */
function firstIssue(error: unknown): string {
  const issues = (error as { issues?: Array<{ path?: PropertyKey[]; message?: string }> } | undefined)?.issues;
  const issue = Array.isArray(issues) ? issues[0] : undefined;
  if (!issue) return "it does not match the schema";
  const path = Array.isArray(issue.path) && issue.path.length > 0 ? issue.path.map(String).join(".") : "the answer";
  return `${path}: ${issue.message ?? "does not match"}`;
}

/**
 * Checks an answer against a zod schema, returning the parsed output or the reason it failed.
 *
 * Strict mode sends an optional property back as null, which zod's `.optional()` refuses, so an
 * answer that fails is tried once more with its null-valued properties left out.
 */
export function checkWithZod(schema: $ZodType, value: unknown): { ok: true; value: unknown } | { ok: false; problem: string } {
  try {
    const first = safeParse(schema, value);
    if (first.success) return { ok: true, value: first.data };
    const second = safeParse(schema, withoutNulls(value));
    if (second.success) return { ok: true, value: second.data };
    return { ok: false, problem: firstIssue(first.error) };
  } catch (error) {
    return { ok: false, problem: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Asks for an answer held to a schema, from `state`.
 *
 * @internal
 */
export async function askJsonIn<T = unknown>(
  state: RuntimeState,
  endpoint: Endpoint,
  model: string,
  system: string,
  input: SideTaskInput,
  schema: SideTaskSchema,
  options: AskJsonOptions = {},
): Promise<T | undefined> {
  const settings = settingsOf(options);
  const prepared = prepareSchema(schema);
  if ("problem" in prepared) {
    sideNotice(state, settings.onNotice, `${taskName(model)} was not sent: ${prepared.problem}.`);
    return undefined;
  }
  const problem = unsendable(endpoint, model, input);
  if (problem !== undefined) {
    sideNotice(state, settings.onNotice, `${taskName(model)} was not sent: ${problem}.`);
    return undefined;
  }
  const name = formatName(settings.name);
  const strict = settings.strict !== false;
  const prompt = [typeof system === "string" ? system.trim() : "", schemaInstruction(prepared)].filter((part) => part !== "").join("\n\n");
  const request: SideTaskRequest = {
    ...requestFor(endpoint, model, prompt, input, settings, SIDE_TASK_CEILINGS.ask),
    responseFormat: (supports) => responseFormatFor(prepared, name, strict, supports),
  };
  const answer = await guarded(state, settings, model, async (): Promise<SideTaskAnswer> => {
    // A grammar-constrained server enforces the relaxed schema: learn that before the first request.
    await learnServerIn(state, endpoint, { signal: settings.signal });
    try {
      return await sendSideTask(state, request);
    } catch (error) {
      if (settings.signal?.aborted || !isGrammarError(error)) throw error;
      // Even the relaxed schema could not be compiled: this once, ask in words.
      notify(
        settings.onNotice,
        `${taskName(model)}: the endpoint could not build a grammar even from the relaxed schema, so this answer is asked for in words.`,
      );
      return sendSideTask(state, { ...request, responseFormat: undefined });
    }
  });
  if (!answer) return undefined;
  const value = readJson(answer.text);
  if (value === undefined) {
    const why =
      answer.text === ""
        ? emptyReason(answer.finishReason, answer.refusal)
        : answer.finishReason === "length"
          ? "its reply ran into the token ceiling before the JSON was complete"
          : "its reply held no JSON";
    notify(settings.onNotice, `${taskName(model)} has no answer: ${why}.`);
    return undefined;
  }
  if (prepared.zod) {
    const checked = checkWithZod(prepared.zod, value);
    if (!checked.ok) {
      notify(settings.onNotice, `${taskName(model)} has no answer: its JSON does not match the schema (${checked.problem}).`);
      return undefined;
    }
    return checked.value as T;
  }
  return value as T;
}
