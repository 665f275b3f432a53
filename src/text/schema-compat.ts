/**
 * @module schema-compat
 * Makes an MCP tool schema something a strict or grammar-constrained server will accept.
 *
 * Two rewrites, one per kind of server. {@link sanitizeTools} writes the subset OpenAI's strict
 * mode takes (every property required, optional ones nullable, `additionalProperties: false`
 * everywhere, an object at the root, a short list of keywords) and marks each function
 * `strict: true`. {@link relaxTools} writes what llama.cpp's json-schema-to-grammar converter and
 * vLLM's xgrammar backend can compile, keeping everything else. {@link sanitizeSchema} and
 * {@link relaxSchema} do the same for a schema that is not a tool's, such as a `response_format`.
 * {@link isGrammarError} recognises the refusal a server sends when it could not build a grammar.
 *
 * Every function takes anything and never throws. The output is a fresh copy (the input is never
 * touched) written with its keywords in one fixed order, so the same tools always produce the same
 * bytes and the prompt cache that starts with them keeps hitting; sanitizing twice changes
 * nothing.
 *
 * @example
 * ```ts
 * const declared = sanitizeTools(tools);
 * const body = { model, messages, tools: supports.strictSchemas ? declared : relaxTools(declared) };
 * ```
 */

import type { JsonSchema, ToolDefinition } from "../shapes/config.js";
import { describeError } from "./error-body.js";
import { grammarSchema } from "./schema-grammar.js";
import { strictSchema } from "./schema-strict.js";
import { STRICT_LIMITS, measureStrictSchema, strictLimitsPassed } from "./schema-strict-size.js";
import { type Json, isObject, toJson } from "./schema-tree.js";

/**
 * The key under which a sanitized tool keeps the parameters it was made from.
 *
 * It is a symbol and not enumerable, so it never reaches a request body; {@link relaxTools}
 * reads it to relax the original schema rather than the strict rewrite of it. A registered symbol,
 * so two copies of this package agree on it.
 */
const ORIGINAL_PARAMETERS: unique symbol = Symbol.for("@cubicecho/agent-core/schema-compat/original-parameters");

function emptyParameters(): JsonSchema {
  return { type: "object", properties: {} };
}

function originalOf(tool: object): Json | undefined {
  const kept = (tool as { [ORIGINAL_PARAMETERS]?: Json })[ORIGINAL_PARAMETERS];
  return kept === undefined ? undefined : kept;
}

function readFunction(tool: unknown): { name: string; description?: string; parameters?: unknown } | undefined {
  try {
    if (typeof tool !== "object" || tool === null) return undefined;
    const fn = (tool as { function?: unknown }).function;
    if (typeof fn !== "object" || fn === null) return undefined;
    const { name, description, parameters } = fn as { name?: unknown; description?: unknown; parameters?: unknown };
    if (typeof name !== "string") return undefined;
    return { name, ...(typeof description === "string" ? { description } : {}), parameters };
  } catch {
    return undefined;
  }
}

function keepOriginal<T extends object>(target: T, original: Json): T {
  Object.defineProperty(target, ORIGINAL_PARAMETERS, { value: original, enumerable: false });
  return target;
}

/**
 * Rewrites a JSON Schema into the subset OpenAI's strict mode accepts, for a schema that is not a
 * tool's parameters (a `response_format`, say).
 *
 * Every object lists all its properties in `required`, with the optional ones made nullable, and
 * sets `additionalProperties: false`; `oneOf` becomes `anyOf` and `allOf` is folded in; a `$ref`
 * stands alone, pointing into a root `$defs` that holds only what is reached, cycles included;
 * `true`, `{}` and a schema that names no type become a union of the scalar types; keywords
 * outside the subset are dropped, and `default`, length bounds, unsupported formats, `uniqueItems`
 * and map value schemas are noted in the description instead. A root union of objects is merged
 * into one object. A root that is not an object stays what it is (strict mode will still refuse
 * it), and `false` comes back as `false`.
 *
 * Like {@link sanitizeTools}, the result carries the schema it was made from under a
 * non-enumerable symbol, so {@link relaxSchema} given the result relaxes the original.
 */
export function sanitizeSchema(schema: JsonSchema): JsonSchema {
  try {
    const original = (typeof schema === "object" && schema !== null ? originalOf(schema) : undefined) ?? toJson(schema);
    const out = strictSchema(schema) as JsonSchema;
    return typeof out === "object" && out !== null ? keepOriginal(out, original) : out;
  } catch {
    return schema;
  }
}

/**
 * Rewrites a JSON Schema so llama.cpp and vLLM can compile it into a grammar, for a schema that is
 * not a tool's parameters.
 *
 * Only what they refuse is changed: a node with no type (what `z.any()` and pydantic's `Any`
 * emit) gets an explicit list of every type; boolean schemas become schemas; a `pattern` that is
 * unanchored, uses a `(?` group or an escape the grammar cannot read is moved into the
 * description; length and item bounds of 2,000 or more are moved there too, as are `multipleOf`,
 * `uniqueItems`, `propertyNames` and unknown formats; `allOf` is folded in and every `$ref`
 * points into a root `$defs`. Optional properties stay optional and maps stay maps. Given the
 * output of {@link sanitizeSchema}, it relaxes the schema that was sanitized.
 */
export function relaxSchema(schema: JsonSchema): JsonSchema {
  try {
    const original = typeof schema === "object" && schema !== null ? originalOf(schema) : undefined;
    return grammarSchema(original ?? schema) as JsonSchema;
  } catch {
    return schema;
  }
}

/**
 * Rewrites tool definitions for a server that enforces OpenAI's strict mode, marking each one
 * `strict: true`.
 *
 * Each function's parameters go through {@link sanitizeSchema} with an object forced at the root
 * (missing or non-object parameters become an object with no properties). `strict` is set to true
 * because that is the flag OpenAI reads to constrain the arguments to the schema; it is set to
 * false for a schema past the size limits strict mode documents (10 levels of nesting, 5,000
 * properties, 1,000 enum values, 120,000 characters of names and values), which the server would
 * otherwise refuse for the whole request, and `onNotice` is told so, once per such tool and call.
 * Nesting is counted through `$ref`: a definition adds its own depth where it is used, and a
 * recursive reference counts one turn of the recursion. The function keeps only `name`,
 * `description`, `parameters` and `strict`. An
 * entry that is not a function tool comes back unchanged; anything but an array gives `[]`.
 *
 * The original parameters travel with each result under a non-enumerable symbol, so
 * {@link relaxTools} given these results relaxes the schema as the server wrote it.
 */
export function sanitizeTools(tools: readonly ToolDefinition[], options: SanitizeToolsOptions = {}): ToolDefinition[] {
  const onNotice = typeof options?.onNotice === "function" ? options.onNotice : undefined;
  return rewriteTools(tools, (original, name) => {
    const parameters = strictSchema(original, { objectRoot: true }) as JsonSchema;
    const passed = strictLimitsPassed(measureStrictSchema(parameters as Json));
    if (passed.length > 0) onNotice?.(strictOffNotice(name, passed), name);
    return { parameters, strict: passed.length === 0 };
  });
}

/**
 * The notice for a tool sent with strict off: which limit its schema is past and what that means.
 *
 * @param name - The tool's name.
 * @param passed - The limits passed, as {@link strictLimitsPassed} names them.
 */
function strictOffNotice(name: string, passed: readonly string[]): string {
  return `The schema of ${name} is past what OpenAI's strict mode takes (${passed.join(", ")}; the limits are ${STRICT_LIMITS.depth} levels of nesting, ${STRICT_LIMITS.properties} properties, ${STRICT_LIMITS.enumValues} enum values); it is sent with strict off, so the server does not hold its arguments to it.`;
}

/** Options for {@link sanitizeTools}. */
export interface SanitizeToolsOptions {
  /**
   * Told, once per tool and call, that a tool goes with strict off because its schema is past the
   * limits: the sentence to show, and the tool's name (for a caller that says it once per run).
   */
  onNotice?: ((text: string, tool: string) => void) | undefined;
}

/**
 * Rewrites tool definitions for a grammar-constrained server, dropping `strict`.
 *
 * Each function's parameters go through {@link relaxSchema}; for a tool that came from
 * {@link sanitizeTools} that is the schema it was made from, so optional properties stay optional
 * rather than arriving as required-but-nullable. A root that is not an object becomes an object
 * with no properties. An entry that is not a function tool comes back unchanged; anything but an
 * array gives `[]`.
 */
export function relaxTools(tools: readonly ToolDefinition[]): ToolDefinition[] {
  return rewriteTools(tools, (original) => {
    const parameters = grammarSchema(original);
    const usable = isObject(parameters) && (parameters.type === "object" || isObject(parameters.properties));
    return { parameters: (usable ? parameters : emptyParameters()) as JsonSchema };
  });
}

/**
 * Rewrites each function tool's parameters from the schema it was first declared with, keeping
 * only name and description beside them and carrying that original on; other entries pass as
 * they are, and a tool whose rewrite fails comes back unchanged.
 */
function rewriteTools(
  tools: readonly ToolDefinition[],
  rewrite: (original: Json, name: string) => { parameters: JsonSchema; strict?: boolean },
): ToolDefinition[] {
  if (!Array.isArray(tools)) return [];
  return tools.map((tool) => {
    const fn = readFunction(tool);
    if (fn === undefined) return tool;
    try {
      const original = originalOf(tool as object) ?? toJson(fn.parameters === undefined ? emptyParameters() : fn.parameters);
      const out: ToolDefinition = {
        type: "function",
        function: {
          name: fn.name,
          ...(fn.description !== undefined ? { description: fn.description } : {}),
          ...rewrite(original, fn.name),
        },
      };
      return keepOriginal(out, original);
    } catch {
      return tool;
    }
  });
}

/**
 * The wordings servers use when they could not build a grammar from a schema, lower-cased.
 *
 * llama.cpp: `common/json-schema-to-grammar.cpp` throws "JSON schema conversion failed:" followed
 * by its errors ("Unrecognized schema: …", "Pattern must start with '^' and end with '$'",
 * "Unsupported ref: …", "Error resolving ref …", "Unbalanced …"), which the server answers
 * behind "Unable to generate parser for this template. Automatic parser generation failed: ";
 * `src/llama-grammar.cpp` logs "failed to parse grammar" and throws "number of repetitions
 * exceeds sane defaults…" and "unknown escape at …", which the server answers as "Failed to
 * initialize samplers: failed to parse grammar" (both recorded in test/fixtures/llama.cpp/).
 * "Failed to initialize samplers" alone is not one of these: followed by anything but the
 * grammar's failure ("std::exception", which a thinking template under `--reasoning-format none`
 * gives every json_schema request) it is the sampler failing, which a relaxed schema does not
 * answer. Ollama passes the parser's "error parsing grammar" through. vLLM
 * (`vllm/v1/structured_output/backend_xgrammar.py`): "The provided JSON schema contains features
 * not supported by xgrammar." and "Failed to transform json schema into a grammar: …"; its
 * guidance backend (llguidance) says "Grammar error: Unimplemented keys: […]".
 */
const GRAMMAR_ERROR_WORDINGS = [
  "json schema conversion failed",
  "unrecognized schema:",
  "pattern must start with '^' and end with '$'",
  "unsupported ref:",
  "error resolving ref",
  "failed to parse grammar",
  "error parsing grammar",
  "exceeds sane defaults",
  "unknown escape at",
  "features not supported by xgrammar",
  "failed to transform json schema into a grammar",
  "unimplemented keys",
];

/**
 * Whether an error is a server saying it could not build a grammar from the schema it was sent.
 *
 * Takes an openai `APIError`, any `Error` (its `cause` chain is read too), a parsed error body or
 * a string, and matches the wordings llama.cpp, Ollama and vLLM use (listed in the source with
 * where each comes from). That refusal is answered by sending {@link relaxTools} output instead.
 * OpenAI's own "Invalid schema for function …" is not one: it is strict mode refusing a schema,
 * which a grammar rewrite does not answer. Never throws; anything unreadable is `false`.
 */
export function isGrammarError(error: unknown): boolean {
  try {
    const text = (typeof error === "string" ? error : describeError(error).message).toLowerCase();
    return GRAMMAR_ERROR_WORDINGS.some((wording) => text.includes(wording));
  } catch {
    return false;
  }
}

function allowsNull(schema: unknown, depth = 0): boolean {
  if (depth > 16 || schema === true || schema === undefined) return true;
  if (schema === false || typeof schema !== "object" || schema === null) return false;
  const node = schema as Record<string, unknown>;
  if (node.nullable === true) return true;
  if (typeof node.$ref === "string") return true;
  if ("const" in node) return node.const === null;
  if (Array.isArray(node.enum)) return node.enum.includes(null);
  for (const key of ["anyOf", "oneOf"]) {
    const branches = node[key];
    if (Array.isArray(branches)) return branches.some((branch) => allowsNull(branch, depth + 1));
  }
  const type = node.type;
  if (type === undefined) return true;
  return type === "null" || (Array.isArray(type) && type.includes("null"));
}

/**
 * Removes the nulls a strict server made the model send for optional properties whose original
 * schema does not take null, so a tool sees them left out as its own schema means.
 *
 * Strict mode makes every property required and an optional one nullable, so a model sends
 * `null` for what it leaves out; a tool server that validates against the schema it published
 * refuses that null. A property the original schema requires, or that takes null itself, keeps
 * its value; nested objects are cleaned against their own properties. The input is not changed.
 *
 * @param args - The call's arguments, as parsed.
 * @param schema - The tool's original parameters schema (before sanitizeTools).
 */
export function omitOptionalNulls(args: Record<string, unknown>, schema: JsonSchema | undefined): Record<string, unknown> {
  return cleanNulls(args, schema, 0) as Record<string, unknown>;
}

function cleanNulls(value: unknown, schema: unknown, depth: number): unknown {
  if (depth > 32 || typeof value !== "object" || value === null || Array.isArray(value)) return value;
  if (typeof schema !== "object" || schema === null) return value;
  const properties = (schema as Record<string, unknown>).properties;
  if (typeof properties !== "object" || properties === null) return value;
  const required = new Set(Array.isArray((schema as Record<string, unknown>).required) ? ((schema as Record<string, unknown>).required as unknown[]) : []);
  const out: Record<string, unknown> = {};
  let changed = false;
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    const property = Object.hasOwn(properties, key) ? (properties as Record<string, unknown>)[key] : undefined;
    if (inner === null && property !== undefined && !required.has(key) && !allowsNull(property)) {
      changed = true;
      continue;
    }
    const cleaned = property === undefined ? inner : cleanNulls(inner, property, depth + 1);
    if (cleaned !== inner) changed = true;
    out[key] = cleaned;
  }
  return changed ? out : value;
}
