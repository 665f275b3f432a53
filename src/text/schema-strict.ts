/**
 * @module text/schema-strict
 * Rewrites a JSON Schema into the subset OpenAI's strict mode accepts.
 *
 * The rules followed are those of OpenAI's structured-outputs guide, "Supported schemas"
 * (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas): every object
 * lists all its properties as required and sets `additionalProperties: false`; an optional
 * property becomes a required one that may be null; the root is an object and not a union; only
 * `anyOf` composes; a `$ref` stands alone; strings keep `pattern` and the listed formats, numbers
 * their bounds and `multipleOf`, arrays `minItems` and `maxItems`; anything else is dropped, the
 * constraints worth telling the model moved into the description.
 */

import {
  type Definitions,
  type Json,
  type JsonObject,
  type SchemaType,
  MAX_DEPTH,
  collectDefinitions,
  foldAllOf,
  isCount,
  isFiniteNumber,
  isObject,
  pointerTo,
  resolveReference,
  scalarType,
  setKey,
  toJson,
  typesOf,
} from "./schema-tree.js";
import { brief, describeWithNotes, ordered, reachableDefinitions, settleReference } from "./schema-tree-write.js";

/** The string formats strict mode accepts. */
export const STRICT_FORMATS: ReadonlySet<string> = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"]);

interface StrictContext {
  readonly definitions: Definitions;
  /** Rewritten definitions by name; an entry exists while one is being written. */
  readonly rewritten: Map<string, JsonObject>;
  /** Definitions being inlined into a `$ref` with siblings, to stop a self-inlining loop. */
  readonly inlining: Set<string>;
  /** Nodes left to visit before the rest is written as an unconstrained value. */
  budget: number;
}

const META_KEYS: ReadonlySet<string> = new Set(["$schema", "$id", "$comment", "$anchor", "$defs", "definitions"]);

/** The unconstrained value strict mode can express: any scalar. */
function anyValue(): JsonObject {
  return { anyOf: [{ type: "string" }, { type: "number" }, { type: "boolean" }, { type: "null" }] };
}

function withMeta(node: JsonObject, title: string | undefined, description: string | undefined): JsonObject {
  const out: JsonObject = { ...node };
  if (title !== undefined) out.title = title;
  if (description !== undefined) out.description = description;
  return ordered(out);
}

/** Allows null in a rewritten node, the way an optional property is written in strict mode. */
export function makeNullable(node: JsonObject): JsonObject {
  if (Array.isArray(node.anyOf)) {
    if (node.anyOf.some((branch) => isObject(branch) && branch.type === "null")) return node;
    return ordered({ ...node, anyOf: [...node.anyOf, { type: "null" }] });
  }
  if (typeof node.$ref === "string") return { anyOf: [node, { type: "null" }] };
  if (Array.isArray(node.type)) return node;
  if (typeof node.type !== "string" || node.type === "null") return node;
  const out: JsonObject = { ...node, type: [node.type, "null"] };
  if (Array.isArray(node.enum) && !node.enum.includes(null)) out.enum = [...node.enum, null];
  if (Object.prototype.hasOwnProperty.call(node, "const")) {
    out.enum = [node.const as Json, null];
    delete out.const;
  }
  return ordered(out);
}

function ensureDefinition(context: StrictContext, name: string, depth: number): void {
  if (context.rewritten.has(name)) return;
  context.rewritten.set(name, anyValue());
  const raw = context.definitions.schemas.get(name);
  let written = strictNode(raw === undefined ? true : raw, context, depth + 1) ?? anyValue();
  if (settleReference(written, context.rewritten, name) === undefined) written = anyValue();
  context.rewritten.set(name, written);
}

function enumFor(values: Json[], type: SchemaType): Json[] | undefined {
  const kept: Json[] = [];
  const seen = new Set<string>();
  for (const value of values) {
    const actual = scalarType(value);
    const fits = actual === type || (type === "number" && actual === "integer") || (type === "integer" && actual === "integer");
    if (!fits) continue;
    const key = JSON.stringify(value);
    if (seen.has(key)) continue;
    seen.add(key);
    kept.push(value);
  }
  return kept;
}

/** Writes the part of a node that applies to one type; undefined when the node allows no value of it. */
function typedNode(node: JsonObject, type: SchemaType, context: StrictContext, depth: number, notes: string[]): JsonObject | undefined {
  const out: JsonObject = { type };
  if (Array.isArray(node.enum)) {
    if (type === "object" || type === "array") return undefined;
    const values = enumFor(node.enum, type);
    if (values === undefined || values.length === 0) return undefined;
    out.enum = values;
  } else if (Object.prototype.hasOwnProperty.call(node, "const")) {
    const value = node.const as Json;
    const actual = scalarType(value);
    if (actual === undefined) return undefined;
    if (!(actual === type || (type === "number" && actual === "integer"))) return undefined;
    out.const = value;
  }
  switch (type) {
    case "object": {
      const properties: JsonObject = {};
      const required: Json[] = [];
      const requiredSet = new Set(Array.isArray(node.required) ? node.required.filter((name) => typeof name === "string") : []);
      const declared = isObject(node.properties) ? node.properties : {};
      for (const key of Object.keys(declared)) {
        let written = strictNode(declared[key] as Json, context, depth + 1);
        if (written === undefined) continue;
        if (!requiredSet.has(key)) written = makeNullable(written);
        setKey(properties, key, written);
        required.push(key);
      }
      out.properties = properties;
      out.required = required;
      out.additionalProperties = false;
      // A map's value schema cannot be said in strict mode; the description keeps it.
      if (isObject(node.additionalProperties) || (node.additionalProperties === true && Object.keys(declared).length === 0)) {
        notes.push(`additionalProperties: ${brief(node.additionalProperties)}`);
      }
      if (isObject(node.patternProperties)) notes.push(`patternProperties: ${brief(node.patternProperties)}`);
      for (const key of ["minProperties", "maxProperties"]) if (isCount(node[key])) notes.push(`${key}: ${node[key]}`);
      break;
    }
    case "array": {
      const tuple = Array.isArray(node.prefixItems) ? node.prefixItems : Array.isArray(node.items) ? node.items : undefined;
      if (tuple !== undefined) {
        const branches: JsonObject[] = [];
        const seen = new Set<string>();
        for (const item of tuple.slice(0, 64)) addBranch(branches, seen, strictNode(item, context, depth + 1));
        out.items = branches.length === 0 ? anyValue() : branches.length === 1 ? (branches[0] as JsonObject) : { anyOf: branches };
        notes.push(`items in order: ${brief(tuple)}`);
      } else if (node.items === false) {
        out.items = anyValue();
        out.maxItems = 0;
      } else {
        out.items = strictNode(node.items === undefined ? true : (node.items as Json), context, depth + 1) ?? anyValue();
      }
      if (isCount(node.minItems)) out.minItems = node.minItems;
      if (isCount(node.maxItems) && out.maxItems === undefined) out.maxItems = node.maxItems;
      if (node.uniqueItems === true) notes.push("uniqueItems: true");
      break;
    }
    case "string": {
      if (typeof node.pattern === "string" && node.pattern.length > 0) {
        let compiles = true;
        try {
          new RegExp(node.pattern);
        } catch {
          compiles = false;
        }
        if (compiles) out.pattern = node.pattern;
        else notes.push(`pattern: ${brief(node.pattern)}`);
      }
      if (typeof node.format === "string") {
        if (STRICT_FORMATS.has(node.format)) out.format = node.format;
        else notes.push(`format: ${node.format}`);
      }
      for (const key of ["minLength", "maxLength"]) if (isCount(node[key])) notes.push(`${key}: ${node[key]}`);
      break;
    }
    case "number":
    case "integer": {
      let minimum = isFiniteNumber(node.minimum) ? node.minimum : undefined;
      let maximum = isFiniteNumber(node.maximum) ? node.maximum : undefined;
      let exclusiveMinimum = isFiniteNumber(node.exclusiveMinimum) ? node.exclusiveMinimum : undefined;
      let exclusiveMaximum = isFiniteNumber(node.exclusiveMaximum) ? node.exclusiveMaximum : undefined;
      // Draft 4 spelled exclusivity as a flag on the bound.
      if (node.exclusiveMinimum === true && minimum !== undefined) [exclusiveMinimum, minimum] = [minimum, undefined];
      if (node.exclusiveMaximum === true && maximum !== undefined) [exclusiveMaximum, maximum] = [maximum, undefined];
      if (minimum !== undefined) out.minimum = minimum;
      if (exclusiveMinimum !== undefined) out.exclusiveMinimum = exclusiveMinimum;
      if (maximum !== undefined) out.maximum = maximum;
      if (exclusiveMaximum !== undefined) out.exclusiveMaximum = exclusiveMaximum;
      if (isFiniteNumber(node.multipleOf) && node.multipleOf > 0) out.multipleOf = node.multipleOf;
      break;
    }
    default:
      break;
  }
  return ordered(out);
}

/**
 * Rewrites one node for strict mode; undefined when the node admits no value at all (`false`),
 * which a caller answers by dropping the property or branch that held it.
 */
export function strictNode(raw: Json, context: StrictContext, depth: number): JsonObject | undefined {
  if (raw === false) return undefined;
  if (!isObject(raw)) return anyValue();
  if (depth > MAX_DEPTH || --context.budget < 0) return anyValue();
  let node = raw;
  if (Array.isArray(node.allOf)) node = foldAllOf(node, context.definitions);

  if (typeof node.$ref === "string") {
    const name = resolveReference(context.definitions, node.$ref);
    const siblings = Object.keys(node).filter((key) => key !== "$ref" && !META_KEYS.has(key));
    if (name !== undefined) {
      if (siblings.length === 0 || context.inlining.has(name)) {
        ensureDefinition(context, name, depth);
        return { $ref: pointerTo(name) };
      }
      // A $ref must stand alone in strict mode, so one with company is written out in place.
      const target = context.definitions.schemas.get(name);
      if (target === false) return undefined;
      const merged: JsonObject = isObject(target) ? { ...target } : {};
      for (const key of siblings) setKey(merged, key, node[key] as Json);
      context.inlining.add(name);
      try {
        return strictNode(merged, context, depth + 1);
      } finally {
        context.inlining.delete(name);
      }
    }
    const rest: JsonObject = {};
    for (const key of siblings) setKey(rest, key, node[key] as Json);
    node = rest;
  }

  const title = typeof node.title === "string" ? node.title : undefined;
  const notes: string[] = [];
  if (Object.prototype.hasOwnProperty.call(node, "default") && node.default !== null) notes.push(`default: ${brief(node.default as Json)}`);
  const finish = (written: JsonObject): JsonObject =>
    withMeta(written, title, describeWithNotes(typeof node.description === "string" ? node.description : undefined, notes));

  const alternatives = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : undefined;
  if (alternatives !== undefined) {
    // Keywords beside the union apply to every branch, so they are carried into each one.
    const shared: JsonObject = {};
    for (const key of Object.keys(node)) {
      if (!["anyOf", "oneOf", "title", "description", "default", "examples"].includes(key) && !META_KEYS.has(key)) {
        setKey(shared, key, node[key] as Json);
      }
    }
    const branches: JsonObject[] = [];
    const seen = new Set<string>();
    for (const alternative of alternatives.slice(0, 64)) {
      const merged = isObject(alternative) && Object.keys(shared).length > 0 ? { ...shared, ...alternative } : alternative;
      addBranch(branches, seen, strictNode(merged, context, depth + 1));
    }
    if (branches.length === 0) return undefined;
    if (branches.length === 1) {
      const only = branches[0] as JsonObject;
      if (typeof only.$ref === "string") {
        return title === undefined && node.description === undefined && notes.length === 0 ? only : finish({ anyOf: [only] });
      }
      return finish({
        ...only,
        ...(typeof only.description === "string" && node.description === undefined ? { description: only.description } : {}),
      });
    }
    return finish({ anyOf: branches });
  }

  const types = typesOf(node);
  const concrete = types.filter((type) => type !== "null");
  const nullable = types.includes("null");
  if (types.length === 0) return finish(anyValue());
  if (concrete.length === 0) return finish({ type: "null" });
  const written: JsonObject[] = [];
  for (const type of concrete) {
    const typed = typedNode(node, type, context, depth, notes);
    if (typed !== undefined) written.push(typed);
  }
  if (written.length === 0) return nullable ? finish({ type: "null" }) : undefined;
  if (written.length === 1) {
    const single = finish(written[0] as JsonObject);
    return nullable ? makeNullable(single) : single;
  }
  if (nullable) written.push({ type: "null" });
  return finish({ anyOf: written });
}

/** Adds a rewritten branch to a union, unwrapping a bare union and skipping a repeat. */
function addBranch(branches: JsonObject[], seen: Set<string>, written: JsonObject | undefined): void {
  if (written === undefined) return;
  const flattened =
    Array.isArray(written.anyOf) && written.description === undefined && written.title === undefined ? (written.anyOf as JsonObject[]) : [written];
  for (const branch of flattened) {
    const key = JSON.stringify(branch);
    if (seen.has(key)) continue;
    seen.add(key);
    branches.push(branch);
  }
}

function emptyObject(): JsonObject {
  return { type: "object", properties: {}, required: [], additionalProperties: false };
}

/** Unites the object branches of a root union into one object whose unshared properties may be null. */
function mergeRootUnion(branches: JsonObject[], context: StrictContext): JsonObject | undefined {
  const objects: JsonObject[] = [];
  for (const branch of branches) {
    let resolved = branch;
    if (typeof branch.$ref === "string" && branch.$ref.startsWith("#/$defs/")) {
      const name = branch.$ref.slice("#/$defs/".length).replace(/~1/g, "/").replace(/~0/g, "~");
      resolved = context.rewritten.get(name) ?? branch;
    }
    if (resolved.type === "null") continue;
    if (resolved.type !== "object" && !(Array.isArray(resolved.type) && resolved.type[0] === "object")) return undefined;
    objects.push(resolved);
  }
  if (objects.length === 0) return undefined;
  const properties: JsonObject = {};
  const counts = new Map<string, number>();
  for (const object of objects) {
    const declared = isObject(object.properties) ? object.properties : {};
    for (const key of Object.keys(declared)) {
      counts.set(key, (counts.get(key) ?? 0) + 1);
      if (!Object.prototype.hasOwnProperty.call(properties, key)) setKey(properties, key, declared[key] as Json);
    }
  }
  for (const [key, count] of counts) {
    if (count < objects.length) setKey(properties, key, makeNullable(properties[key] as JsonObject));
  }
  return { type: "object", properties, required: [...counts.keys()], additionalProperties: false };
}

/** Options for {@link strictSchema}. */
export interface StrictSchemaOptions {
  /** Force an object root, writing anything else as an object with no properties. */
  objectRoot?: boolean | undefined;
}

/** Rewrites a whole schema for strict mode; never throws. */
export function strictSchema(input: unknown, options: StrictSchemaOptions = {}): Json {
  const root = toJson(input);
  if (root === false && !options.objectRoot) return false;
  const context: StrictContext = {
    definitions: collectDefinitions(root),
    rewritten: new Map(),
    inlining: new Set(),
    budget: 20_000,
  };
  let out = strictNode(root, context, 0) ?? (options.objectRoot ? emptyObject() : anyValue());
  // The root may not be a reference or a union, and may not be null.
  if (typeof out.$ref === "string") out = settleReference(out, context.rewritten) ?? anyValue();
  if (Array.isArray(out.anyOf)) {
    const merged = mergeRootUnion(out.anyOf as JsonObject[], context);
    if (merged !== undefined) out = ordered({ ...merged, title: out.title as Json, description: out.description as Json });
  }
  if (Array.isArray(out.type) && out.type[0] === "object") out = ordered({ ...out, type: "object" });
  if (options.objectRoot && out.type !== "object") out = emptyObject();
  const definitions = reachableDefinitions(out, context.rewritten);
  return definitions === undefined ? out : { ...out, $defs: definitions };
}
