/**
 * @module text/schema-grammar
 * Rewrites a JSON Schema so that a grammar-constrained server can compile it: llama.cpp's
 * json-schema-to-grammar converter and GBNF parser, and vLLM's xgrammar backend.
 *
 * What each refuses, as read in their source:
 * - llama.cpp `common/json-schema-to-grammar.cpp` (ggml-org/llama.cpp@011c6c3c and the older
 *   ggerganov/llama.cpp@02e26344): a node with no type it can place, such as `{"description": …}`
 *   or a boolean schema, ends in "Unrecognized schema"; a `pattern` must be anchored with `^` and
 *   `$` ("Pattern must start with '^' and end with '$'"); look-arounds and other `(?` groups are
 *   not supported; a `$ref` must be a local `#/` pointer ("Unsupported ref"); `format` is read as
 *   a string and `exclusiveMinimum` as a number.
 * - llama.cpp `src/llama-grammar.cpp`: a repetition bound of 2,000 or more ("number of
 *   repetitions exceeds sane defaults"), which `minLength`/`maxLength`/`minItems`/`maxItems`
 *   become; and escapes other than `\t \r \n \\ \" \[ \]` and `\x \u \U` ("unknown escape at").
 * - vLLM `vllm/v1/structured_output/backend_xgrammar.py` (`has_xgrammar_unsupported_json_features`):
 *   `multipleOf`; `uniqueItems`, `contains`, `minContains`, `maxContains`; a string format outside
 *   its list; a pattern or format together with a length bound; `propertyNames` beside other
 *   object keywords; `patternProperties` beside `properties` or more than one of them.
 *
 * Everything else is kept: optional properties stay optional, maps stay maps.
 */

import {
  type Definitions,
  type Json,
  type JsonObject,
  MAX_DEPTH,
  collectDefinitions,
  foldAllOf,
  isCount,
  isFiniteNumber,
  isObject,
  pointerTo,
  resolveReference,
  setKey,
  toJson,
  typesOf,
} from "./schema-tree.js";
import { brief, describeWithNotes, ordered, reachableDefinitions, settleReference } from "./schema-tree-write.js";

/** Repetition bounds from this number up make llama.cpp's grammar parser refuse the grammar. */
export const GRAMMAR_REPETITION_LIMIT = 2000;

/** The string formats vLLM's xgrammar backend accepts. */
export const GRAMMAR_FORMATS: ReadonlySet<string> = new Set([
  "email",
  "date",
  "time",
  "date-time",
  "duration",
  "ipv4",
  "ipv6",
  "hostname",
  "uuid",
  "uri",
  "uri-reference",
  "uri-template",
  "json-pointer",
  "relative-json-pointer",
]);

/** Characters llama.cpp's converter unescapes when they follow a backslash outside a class. */
const UNESCAPED_BY_CONVERTER: ReadonlySet<string> = new Set(["^", "$", ".", "[", "]", "(", ")", "|", "{", "}", "*", "+", "?"]);
/** Escapes llama.cpp's GBNF parser reads (`parse_char`). */
const GRAMMAR_ESCAPES: ReadonlySet<string> = new Set(["t", "r", "n", "\\", '"', "[", "]"]);
const HEX_ESCAPES: Record<string, number> = { x: 2, u: 4, U: 8 };

function readEscape(text: string, index: number, inClass: boolean): number {
  const next = text[index + 1];
  if (next === undefined) return -1;
  if (!inClass && UNESCAPED_BY_CONVERTER.has(next)) return index + 2;
  if (GRAMMAR_ESCAPES.has(next)) return index + 2;
  const digits = HEX_ESCAPES[next];
  if (digits !== undefined) {
    const hex = text.slice(index + 2, index + 2 + digits);
    return hex.length === digits && /^[0-9a-fA-F]+$/.test(hex) ? index + 2 + digits : -1;
  }
  return -1;
}

/**
 * Whether llama.cpp turns a `pattern` into a grammar it can parse: anchored, with no `(?` group,
 * only escapes its grammar reads, balanced brackets, and repetition bounds whose product stays
 * under {@link GRAMMAR_REPETITION_LIMIT}.
 */
export function isGrammarSafePattern(pattern: unknown): boolean {
  if (typeof pattern !== "string" || pattern.length < 3) return false;
  if (!pattern.startsWith("^") || !pattern.endsWith("$")) return false;
  const body = pattern.slice(1, -1);
  if (/(^|[^\\])(\\\\)*\\$/.test(body)) return false;
  let depth = 0;
  let canRepeat = false;
  let product = 1;
  let index = 0;
  while (index < body.length) {
    const char = body[index] as string;
    if (char === "\\") {
      const end = readEscape(body, index, false);
      if (end < 0) return false;
      index = end;
      canRepeat = true;
    } else if (char === "(") {
      if (body[index + 1] === "?") return false;
      depth++;
      index++;
      canRepeat = false;
    } else if (char === ")") {
      depth--;
      if (depth < 0) return false;
      index++;
      canRepeat = true;
    } else if (char === "[") {
      let cursor = index + 1;
      if (body[cursor] === "^") cursor++;
      const start = cursor;
      while (cursor < body.length && body[cursor] !== "]") {
        if (body[cursor] === "\\") {
          const end = readEscape(body, cursor, true);
          if (end < 0) return false;
          cursor = end;
        } else {
          cursor++;
        }
      }
      if (cursor >= body.length || cursor === start) return false;
      index = cursor + 1;
      canRepeat = true;
    } else if (char === "{") {
      const close = body.indexOf("}", index);
      if (close < 0 || !canRepeat) return false;
      const bounds = body.slice(index + 1, close);
      const match = /^(\d*)(?:,(\d*))?$/.exec(bounds);
      if (!match || bounds.length === 0 || (match[1] === "" && match[2] === undefined)) return false;
      const low = match[1] === "" ? 0 : Number(match[1]);
      const high = match[2] === undefined ? low : match[2] === "" ? undefined : Number(match[2]);
      if (low >= GRAMMAR_REPETITION_LIMIT || (high !== undefined && high >= GRAMMAR_REPETITION_LIMIT)) return false;
      product *= Math.max(1, high ?? low);
      if (product >= GRAMMAR_REPETITION_LIMIT) return false;
      index = close + 1;
      canRepeat = false;
    } else if (char === "*" || char === "+" || char === "?") {
      if (!canRepeat) return false;
      index++;
      canRepeat = false;
    } else if (char === "|") {
      index++;
      canRepeat = false;
    } else if (char === "}" || char === "]") {
      return false;
    } else {
      index++;
      canRepeat = true;
    }
  }
  return depth === 0;
}

interface GrammarContext {
  readonly definitions: Definitions;
  readonly rewritten: Map<string, JsonObject>;
  budget: number;
}

/** A value of any type, written as a type list both converters read. */
function anyValue(): JsonObject {
  return { type: ["string", "number", "boolean", "object", "array", "null"] };
}

function ensureDefinition(context: GrammarContext, name: string, depth: number): void {
  if (context.rewritten.has(name)) return;
  context.rewritten.set(name, anyValue());
  const raw = context.definitions.schemas.get(name);
  let written = grammarNode(raw === undefined ? true : raw, context, depth + 1) ?? anyValue();
  if (settleReference(written, context.rewritten, name) === undefined) written = anyValue();
  context.rewritten.set(name, written);
}

const BOUNDS = ["minLength", "maxLength", "minItems", "maxItems"] as const;

/** Rewrites one node; undefined when the node admits no value at all (`false`). */
function grammarNode(raw: Json, context: GrammarContext, depth: number): JsonObject | undefined {
  if (raw === false) return undefined;
  if (!isObject(raw)) return anyValue();
  if (depth > MAX_DEPTH || --context.budget < 0) return anyValue();
  let node = raw;
  if (Array.isArray(node.allOf)) node = foldAllOf(node, context.definitions);
  const description = typeof node.description === "string" ? node.description : undefined;
  const title = typeof node.title === "string" ? node.title : undefined;
  const notes: string[] = [];
  const out: JsonObject = {};
  const finish = (written: JsonObject): JsonObject => {
    const text = describeWithNotes(description, notes);
    return ordered({ ...written, ...(title !== undefined ? { title } : {}), ...(text !== undefined ? { description: text } : {}) });
  };

  if (typeof node.$ref === "string") {
    const name = resolveReference(context.definitions, node.$ref);
    if (name !== undefined) {
      ensureDefinition(context, name, depth);
      return finish({ $ref: pointerTo(name) });
    }
  }
  if (Object.prototype.hasOwnProperty.call(node, "default")) out.default = node.default as Json;

  const alternatives = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : undefined;
  if (alternatives !== undefined) {
    const shared: JsonObject = {};
    for (const key of Object.keys(node)) {
      if (!["anyOf", "oneOf", "title", "description", "default", "examples", "$ref", "$defs", "definitions"].includes(key)) {
        setKey(shared, key, node[key] as Json);
      }
    }
    const branches: JsonObject[] = [];
    const seen = new Set<string>();
    for (const alternative of alternatives.slice(0, 64)) {
      const merged = isObject(alternative) && Object.keys(shared).length > 0 ? { ...shared, ...alternative } : alternative;
      const written = grammarNode(merged, context, depth + 1);
      if (written === undefined) continue;
      const key = JSON.stringify(written);
      if (!seen.has(key)) {
        seen.add(key);
        branches.push(written);
      }
    }
    if (branches.length === 0) return undefined;
    if (branches.length === 1 && description === undefined && title === undefined) return branches[0] as JsonObject;
    return finish({ ...out, anyOf: branches });
  }

  if (Array.isArray(node.enum) && node.enum.length > 0) out.enum = node.enum;
  else if (Object.prototype.hasOwnProperty.call(node, "const")) out.const = node.const as Json;

  const types = typesOf(node);
  if (types.length === 0 && out.enum === undefined && out.const === undefined) return finish({ ...out, ...anyValue() });
  if (types.length === 1) out.type = types[0] as string;
  else if (types.length > 1) out.type = types;
  const allows = (type: string): boolean => types.length === 0 || types.includes(type as never);

  if (allows("object")) {
    if (isObject(node.properties)) {
      const properties: JsonObject = {};
      const dropped = new Set<string>();
      for (const key of Object.keys(node.properties)) {
        const written = grammarNode(node.properties[key] as Json, context, depth + 1);
        if (written === undefined) dropped.add(key);
        else setKey(properties, key, written);
      }
      out.properties = properties;
      if (Array.isArray(node.required)) {
        out.required = node.required.filter((name): name is string => typeof name === "string" && !dropped.has(name));
      }
    }
    let additional = node.additionalProperties;
    if (additional === undefined && isObject(node.patternProperties) && !isObject(node.properties)) {
      const patterns = Object.keys(node.patternProperties);
      if (patterns.length === 1) additional = node.patternProperties[patterns[0] as string] as Json;
    }
    if (isObject(node.patternProperties) && additional !== node.patternProperties[Object.keys(node.patternProperties)[0] as string]) {
      notes.push(`patternProperties: ${brief(node.patternProperties)}`);
    }
    if (typeof additional === "boolean") out.additionalProperties = additional;
    else if (isObject(additional)) out.additionalProperties = grammarNode(additional, context, depth + 1) ?? false;
    if (isObject(node.propertyNames) && typeof node.propertyNames.pattern === "string") {
      notes.push(`property names match ${brief(node.propertyNames.pattern)}`);
    }
  }
  if (allows("array")) {
    const tuple = Array.isArray(node.prefixItems) ? node.prefixItems : Array.isArray(node.items) ? node.items : undefined;
    if (tuple !== undefined) {
      out.items = tuple.slice(0, 64).map((item) => grammarNode(item, context, depth + 1) ?? anyValue());
    } else if (node.items === false) {
      out.items = anyValue();
      out.maxItems = 0;
    } else if (node.items !== undefined) {
      out.items = grammarNode(node.items as Json, context, depth + 1) ?? anyValue();
    }
    if (node.uniqueItems === true) notes.push("uniqueItems: true");
  }
  if (allows("string")) {
    if (node.pattern !== undefined) {
      if (isGrammarSafePattern(node.pattern)) out.pattern = node.pattern as string;
      else if (typeof node.pattern === "string") notes.push(`pattern: ${brief(node.pattern)}`);
    }
    if (typeof node.format === "string") {
      if (GRAMMAR_FORMATS.has(node.format)) out.format = node.format;
      else notes.push(`format: ${node.format}`);
    }
  }
  for (const key of BOUNDS) {
    const value = node[key];
    if (!isCount(value)) continue;
    const isLength = key === "minLength" || key === "maxLength";
    if (isLength && !allows("string")) continue;
    if (!isLength && !allows("array")) continue;
    const blocked = isLength && (out.pattern !== undefined || out.format !== undefined);
    if (key === "maxItems" && out.maxItems !== undefined) continue;
    if (value < GRAMMAR_REPETITION_LIMIT && !blocked) out[key] = value;
    else notes.push(`${key}: ${value}`);
  }
  if (allows("number") || allows("integer")) {
    const safe = (value: unknown): value is number => isFiniteNumber(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER;
    let minimum = safe(node.minimum) ? node.minimum : undefined;
    let maximum = safe(node.maximum) ? node.maximum : undefined;
    let exclusiveMinimum = safe(node.exclusiveMinimum) ? node.exclusiveMinimum : undefined;
    let exclusiveMaximum = safe(node.exclusiveMaximum) ? node.exclusiveMaximum : undefined;
    if (node.exclusiveMinimum === true && minimum !== undefined) [exclusiveMinimum, minimum] = [minimum, undefined];
    if (node.exclusiveMaximum === true && maximum !== undefined) [exclusiveMaximum, maximum] = [maximum, undefined];
    if (minimum !== undefined) out.minimum = minimum;
    if (exclusiveMinimum !== undefined) out.exclusiveMinimum = exclusiveMinimum;
    if (maximum !== undefined) out.maximum = maximum;
    if (exclusiveMaximum !== undefined) out.exclusiveMaximum = exclusiveMaximum;
    if (isFiniteNumber(node.multipleOf)) notes.push(`multipleOf: ${node.multipleOf}`);
  }
  return finish(out);
}

/** Rewrites a whole schema for grammar-constrained servers; never throws. */
export function grammarSchema(input: unknown): Json {
  const root = toJson(input);
  if (root === false) return false;
  const context: GrammarContext = { definitions: collectDefinitions(root), rewritten: new Map(), budget: 20_000 };
  let out = grammarNode(root, context, 0) ?? anyValue();
  if (typeof out.$ref === "string" && settleReference(out, context.rewritten) === undefined) out = anyValue();
  const definitions = reachableDefinitions(out, context.rewritten);
  return definitions === undefined ? out : { ...out, $defs: definitions };
}
