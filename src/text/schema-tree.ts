/**
 * @module text/schema-tree
 * How schema-compat's two rewriters read the schema they are given: copying an untrusted schema
 * into plain JSON, naming and resolving its references, folding `allOf`, and the types a node
 * allows. How they write their output is text/schema-tree-write.
 *
 * Every function here takes anything and never throws. A reference cycle in the schema stays a
 * reference; a cycle in the JavaScript object graph, a getter that throws, or nesting past
 * {@link MAX_DEPTH} becomes an empty schema at that point.
 */

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | JsonObject;

/** A JSON object. */
export interface JsonObject {
  [key: string]: Json;
}

/** How deep a schema is followed before the rest is treated as an empty schema. */
export const MAX_DEPTH = 64;

const MAX_ARRAY_ITEMS = 10_000;

/** Whether a value is a JSON object (not an array, not null). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Sets a key on a plain object, including one spelled `__proto__`, as an own enumerable property. */
export function setKey(target: JsonObject, key: string, value: Json): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

function copy(value: unknown, depth: number, stack: Set<object>): Json | undefined {
  if (value === null) return null;
  switch (typeof value) {
    case "boolean":
    case "string":
      return value;
    case "number":
      return Number.isFinite(value) ? value : undefined;
    case "object":
      break;
    default:
      return undefined;
  }
  const object = value as object;
  if (depth > MAX_DEPTH || stack.has(object)) return {};
  stack.add(object);
  try {
    if (Array.isArray(object)) {
      const out: Json[] = [];
      const length = Math.min(object.length, MAX_ARRAY_ITEMS);
      for (let index = 0; index < length; index++) {
        const item = copy(object[index], depth + 1, stack);
        out.push(item === undefined ? null : item);
      }
      return out;
    }
    const out: JsonObject = {};
    for (const key of Object.keys(object)) {
      let item: unknown;
      try {
        item = (object as Record<string, unknown>)[key];
      } catch {
        continue;
      }
      const copied = copy(item, depth + 1, stack);
      if (copied !== undefined) setKey(out, key, copied);
    }
    return out;
  } catch {
    return {};
  } finally {
    stack.delete(object);
  }
}

/** Copies any value into plain JSON: drops what JSON cannot hold and breaks object cycles. */
export function toJson(value: unknown): Json {
  const copied = copy(value, 0, new Set());
  return copied === undefined ? null : copied;
}

/** Decodes one JSON-pointer token (`~1` is `/`, `~0` is `~`). */
export function decodeToken(token: string): string {
  let decoded = token.replace(/~1/g, "/").replace(/~0/g, "~");
  if (decoded.includes("%")) {
    try {
      decoded = decodeURIComponent(decoded);
    } catch {
      // Not percent-encoded after all; keep it as written.
    }
  }
  return decoded;
}

/** Encodes a definition name as one JSON-pointer token. */
function encodeToken(name: string): string {
  return name.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** The `$ref` that points at definition `name` in the rewritten schema. */
export function pointerTo(name: string): string {
  return `#/$defs/${encodeToken(name)}`;
}

/** The named subschemas of one document and how each reference string maps onto them. */
export interface Definitions {
  /** The document, as copied. */
  readonly root: Json;
  /** Definition name to its schema as written. */
  readonly schemas: Map<string, Json>;
  /** Reference string to definition name, for every reference resolved so far. */
  readonly names: Map<string, string>;
}

const CONTAINERS = ["$defs", "definitions"] as const;

function freeName(schemas: Map<string, Json>, wanted: string): string {
  const base = wanted.length > 0 ? wanted : "schema";
  if (!schemas.has(base)) return base;
  for (let suffix = 2; ; suffix++) {
    const candidate = `${base}_${suffix}`;
    if (!schemas.has(candidate)) return candidate;
  }
}

/**
 * Collects the definitions of a document: the root's `$defs` and `definitions`, then any nested
 * ones hoisted up under names not already taken.
 */
export function collectDefinitions(root: Json): Definitions {
  const schemas = new Map<string, Json>();
  const names = new Map<string, string>();
  if (isObject(root)) {
    for (const container of CONTAINERS) {
      const defs = root[container];
      if (!isObject(defs)) continue;
      for (const key of Object.keys(defs)) {
        const name = freeName(schemas, key);
        schemas.set(name, defs[key] as Json);
        names.set(`#/${container}/${encodeToken(key)}`, name);
      }
    }
    // Nested definitions, which some generators emit while pointing at the root's.
    const visit = (node: Json, depth: number, top: boolean): void => {
      if (depth > MAX_DEPTH) return;
      if (Array.isArray(node)) {
        for (const item of node) visit(item, depth + 1, false);
        return;
      }
      if (!isObject(node)) return;
      for (const key of Object.keys(node)) {
        const value = node[key] as Json;
        if (!top && (key === "$defs" || key === "definitions") && isObject(value)) {
          for (const inner of Object.keys(value)) {
            const pointer = `#/${key}/${encodeToken(inner)}`;
            if (!names.has(pointer)) {
              const name = freeName(schemas, inner);
              schemas.set(name, value[inner] as Json);
              names.set(pointer, name);
            }
          }
        }
        visit(value, depth + 1, false);
      }
    };
    visit(root, 0, true);
  }
  return { root, schemas, names };
}

function withoutDefinitions(node: Json): Json {
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const key of Object.keys(node)) {
    if (key !== "$defs" && key !== "definitions") setKey(out, key, node[key] as Json);
  }
  return out;
}

/** Follows a JSON pointer's decoded tokens from `root`; undefined where one leads nowhere. */
export function followPointer(root: Json, tokens: readonly string[]): Json | undefined {
  let target: Json | undefined = root;
  for (const token of tokens) {
    if (Array.isArray(target)) {
      const index = /^(0|[1-9]\d*)$/.test(token) ? Number(token) : -1;
      target = index >= 0 && index < target.length ? target[index] : undefined;
    } else if (isObject(target) && Object.prototype.hasOwnProperty.call(target, token)) {
      target = target[token] as Json;
    } else {
      return undefined;
    }
  }
  return target;
}

/**
 * Resolves a `$ref` to a definition name, registering a new definition for a pointer that does
 * not name one (`#`, `#/properties/a/items`). Answers undefined for a reference that leads
 * nowhere in the document, including every remote one.
 */
export function resolveReference(definitions: Definitions, reference: string): string | undefined {
  const known = definitions.names.get(reference);
  if (known !== undefined) return known;
  if (!reference.startsWith("#")) return undefined;
  const pointer = reference.slice(1);
  if (pointer !== "" && !pointer.startsWith("/")) return undefined;
  const tokens = pointer === "" ? [] : pointer.slice(1).split("/").map(decodeToken);
  const target = followPointer(definitions.root, tokens);
  if (target === undefined) return undefined;
  if (!isObject(target) && typeof target !== "boolean") return undefined;
  const wanted = tokens.length === 0 ? "Root" : tokens.join("-").replace(/[^A-Za-z0-9_.-]+/g, "_");
  const name = freeName(definitions.schemas, wanted);
  definitions.schemas.set(name, tokens.length === 0 ? withoutDefinitions(target) : target);
  definitions.names.set(reference, name);
  return name;
}

const MERGE_LIMIT = 64;

/**
 * Folds a node's `allOf` into the node itself: properties are united (a name in two parts is
 * folded the same way), `required` lists are joined, and any other keyword is taken from the
 * node first and then from the first part that has it. A part that is a reference is read
 * through one level.
 */
export function foldAllOf(node: JsonObject, definitions: Definitions): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(node)) if (key !== "allOf") setKey(out, key, node[key] as Json);
  const queue: Json[] = Array.isArray(node.allOf) ? [...node.allOf] : [];
  const followed = new Set<string>();
  let steps = 0;
  while (queue.length > 0 && steps++ < MERGE_LIMIT) {
    let part = queue.shift() as Json;
    if (isObject(part) && typeof part.$ref === "string" && Object.keys(part).length === 1) {
      const name = resolveReference(definitions, part.$ref);
      if (name === undefined || followed.has(name)) continue;
      followed.add(name);
      part = definitions.schemas.get(name) ?? true;
    }
    if (!isObject(part)) continue;
    for (const key of Object.keys(part)) {
      const value = part[key] as Json;
      if (key === "allOf") {
        if (Array.isArray(value)) queue.push(...value);
      } else if (key === "properties" && isObject(value)) {
        const merged: JsonObject = isObject(out.properties) ? { ...out.properties } : {};
        for (const name of Object.keys(value)) {
          const existing = merged[name];
          setKey(merged, name, existing === undefined ? (value[name] as Json) : { allOf: [existing, value[name] as Json] });
        }
        out.properties = merged;
      } else if (key === "required" && Array.isArray(value)) {
        const joined = Array.isArray(out.required) ? [...out.required] : [];
        for (const name of value) if (!joined.includes(name)) joined.push(name);
        out.required = joined;
      } else if (!Object.prototype.hasOwnProperty.call(out, key)) {
        setKey(out, key, value);
      }
    }
  }
  return out;
}

/** The JSON types of a value that is neither an object nor an array. */
type ScalarType = "string" | "number" | "integer" | "boolean" | "null";

/** The JSON type of a scalar value, or undefined for an object or array. */
export function scalarType(value: Json): ScalarType | undefined {
  if (value === null) return "null";
  if (typeof value === "string") return "string";
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return undefined;
}

/** The JSON Schema types. */
export const SCHEMA_TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"] as const;

/** One JSON Schema type name. */
export type SchemaType = (typeof SCHEMA_TYPES)[number];

const OBJECT_KEYWORDS = ["properties", "additionalProperties", "required", "patternProperties", "propertyNames", "minProperties", "maxProperties"];
const ARRAY_KEYWORDS = ["items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains"];
const STRING_KEYWORDS = ["pattern", "format", "minLength", "maxLength"];
const NUMBER_KEYWORDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];

/**
 * The types a node allows: its `type` (a name or a list; unknown names dropped; `nullable: true`
 * adds null), or, where it names none, the types its enum, const or keywords imply. Empty means
 * the node says nothing about type.
 */
export function typesOf(node: JsonObject): SchemaType[] {
  const declared: SchemaType[] = [];
  const add = (type: unknown): void => {
    if (typeof type === "string" && (SCHEMA_TYPES as readonly string[]).includes(type) && !declared.includes(type as SchemaType)) {
      declared.push(type as SchemaType);
    }
  };
  if (Array.isArray(node.type)) node.type.forEach(add);
  else add(node.type);
  if (declared.length === 0) {
    const values = Array.isArray(node.enum) ? node.enum : Object.prototype.hasOwnProperty.call(node, "const") ? [node.const as Json] : undefined;
    if (values !== undefined) {
      for (const value of values) {
        const type = scalarType(value);
        add(type === "integer" ? "number" : type);
      }
    } else {
      const has = (keys: string[]): boolean => keys.some((key) => Object.prototype.hasOwnProperty.call(node, key));
      if (has(OBJECT_KEYWORDS)) add("object");
      if (has(ARRAY_KEYWORDS)) add("array");
      if (has(STRING_KEYWORDS)) add("string");
      if (has(NUMBER_KEYWORDS)) add("number");
    }
  }
  if (node.nullable === true && declared.length > 0) add("null");
  if (declared.includes("integer") && declared.includes("number")) declared.splice(declared.indexOf("integer"), 1);
  return declared;
}

/** Whether a value is a whole number in the range a grammar or a validator can take. */
export function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= Number.MAX_SAFE_INTEGER;
}

/** Whether a value is a finite number. */
export function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}
