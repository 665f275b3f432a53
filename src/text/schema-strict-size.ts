/**
 * @module text/schema-strict-size
 * Measures a schema against the size limits strict mode documents for one request: how deep its
 * objects nest once every `$ref` is followed, and how many properties, enum values and characters
 * of names and values it holds.
 *
 * The limits are those of OpenAI's structured-outputs guide, "Supported schemas"
 * (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas). Callers send a
 * schema past any of them with strict off rather than have the server refuse the request.
 */

import { type Json, MAX_DEPTH, decodeToken, followPointer, isObject } from "./schema-tree.js";

/** The size limits strict mode documents for one schema. */
export const STRICT_LIMITS = {
  /** Object nesting levels. */
  depth: 10,
  /** Object properties across the whole schema. */
  properties: 5000,
  /** Enum values across the whole schema. */
  enumValues: 1000,
  /** Characters across property names, definition names, enum values and const values. */
  characters: 120_000,
} as const;

/** What {@link measureStrictSchema} finds in one schema, beside the limits of {@link STRICT_LIMITS}. */
export interface StrictSchemaSize {
  /**
   * The deepest object nesting, the root object being level 1, with each `$ref` counted as the
   * definition it points at, at the place it is used. A reference back into a definition that is
   * already open on the way down adds nothing more, so a recursive schema counts as one turn of its
   * recursion. `Infinity` when the schema is too tangled to measure within bounded work.
   */
  depth: number;
  /** Object properties across the whole schema, each definition counted once. */
  properties: number;
  /** Enum values across the whole schema. */
  enumValues: number;
  /** Characters across property names, definition names, enum values and const values. */
  characters: number;
}

/** Steps (properties, items, branches, references) the depth walk follows down one path. */
const DEPTH_PATH_LIMIT = MAX_DEPTH * 4;
/** Nodes the depth walk may visit in all before it calls the schema unmeasurable. */
const DEPTH_WORK_LIMIT = 100_000;

/** Keywords whose value is never a subschema, or (definitions) is reached only through `$ref`. */
const NOT_SUBSCHEMAS: ReadonlySet<string> = new Set(["$ref", "$defs", "definitions", "enum", "const", "default", "examples", "required"]);
/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAPS: ReadonlySet<string> = new Set(["properties", "patternProperties", "dependentSchemas"]);

/** Resolves a local JSON pointer (`#`, `#/$defs/a`, `#/properties/x/items`) inside a document. */
function pointed(root: Json, reference: string): Json | undefined {
  if (!reference.startsWith("#")) return undefined;
  const pointer = reference.slice(1);
  if (pointer === "") return root;
  if (!pointer.startsWith("/")) return undefined;
  return followPointer(root, pointer.slice(1).split("/").map(decodeToken));
}

/** Counts properties, enum values and characters over the schema as written, definitions once each. */
function tallyStrictSchema(schema: Json): Omit<StrictSchemaSize, "depth"> {
  const size = { properties: 0, enumValues: 0, characters: 0 };
  const visit = (node: Json, depth: number): void => {
    if (depth > DEPTH_PATH_LIMIT) return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item, depth + 1);
      return;
    }
    if (!isObject(node)) return;
    if (isObject(node.properties)) {
      for (const key of Object.keys(node.properties)) {
        size.properties++;
        size.characters += key.length;
      }
    }
    for (const container of ["$defs", "definitions"]) {
      const defs = node[container];
      if (isObject(defs)) for (const key of Object.keys(defs)) size.characters += key.length;
    }
    if (Array.isArray(node.enum)) {
      size.enumValues += node.enum.length;
      for (const value of node.enum) size.characters += typeof value === "string" ? value.length : String(value).length;
    }
    if (typeof node.const === "string") size.characters += node.const.length;
    for (const key of Object.keys(node)) if (key !== "enum" && key !== "const") visit(node[key] as Json, depth + 1);
  };
  visit(schema, 0);
  return size;
}

/**
 * The deepest object nesting of a schema as a server that follows its references sees it.
 *
 * A definition is walked once where it is first reached and its depth remembered, so a schema
 * that uses one definition in many places costs what the definition costs once. A reference to a
 * definition still open above it (recursion) counts nothing more there. The depth found for a
 * definition whose walk met such a reference to something opened before it depends on the path
 * it was reached by, so it is not remembered; every remembered depth is the most its definition
 * can add anywhere, which makes the answer never less than the deepest path with each recursion
 * taken once round. Past {@link DEPTH_WORK_LIMIT} visits or {@link DEPTH_PATH_LIMIT} steps down one
 * path the answer is `Infinity`.
 */
function strictSchemaDepth(schema: Json): number {
  const remembered = new Map<object, number>();
  /** Open definitions, each with its place on the way down. */
  const open = new Map<object, number>();
  let work = 0;
  let gaveUp = false;
  /** The depth under a node, and the shallowest open definition its walk referred back to. */
  const walk = (node: Json, steps: number): { depth: number; reachedBack: number } => {
    const none = { depth: 0, reachedBack: Number.POSITIVE_INFINITY };
    if (gaveUp) return none;
    if (++work > DEPTH_WORK_LIMIT || steps > DEPTH_PATH_LIMIT) {
      gaveUp = true;
      return none;
    }
    if (Array.isArray(node)) {
      let depth = 0;
      let reachedBack = Number.POSITIVE_INFINITY;
      for (const item of node) {
        const inner = walk(item, steps + 1);
        depth = Math.max(depth, inner.depth);
        reachedBack = Math.min(reachedBack, inner.reachedBack);
      }
      return { depth, reachedBack };
    }
    if (!isObject(node)) return none;
    let depth = 0;
    let reachedBack = Number.POSITIVE_INFINITY;
    if (typeof node.$ref === "string") {
      const target = pointed(schema, node.$ref);
      if (isObject(target)) {
        const place = open.get(target);
        const known = remembered.get(target);
        if (place !== undefined) reachedBack = place;
        else if (known !== undefined) depth = known;
        else {
          const at = steps;
          open.set(target, at);
          const inner = walk(target, steps + 1);
          open.delete(target);
          depth = inner.depth;
          if (inner.reachedBack >= at) remembered.set(target, inner.depth);
          else reachedBack = inner.reachedBack;
        }
      }
    }
    const own = isObject(node.properties) ? 1 : 0;
    for (const key of Object.keys(node)) {
      if (NOT_SUBSCHEMAS.has(key)) continue;
      const value = node[key] as Json;
      if (typeof value !== "object" || value === null) continue;
      // A map of subschemas is walked entry by entry, so a property called "properties" is not a level.
      const children = SCHEMA_MAPS.has(key) && isObject(value) ? Object.values(value) : [value];
      for (const child of children) {
        const inner = walk(child as Json, steps + 1);
        depth = Math.max(depth, inner.depth);
        reachedBack = Math.min(reachedBack, inner.reachedBack);
      }
    }
    return { depth: own + depth, reachedBack };
  };
  if (isObject(schema)) open.set(schema, 0);
  const { depth } = walk(schema, 0);
  return gaveUp ? Number.POSITIVE_INFINITY : depth;
}

/**
 * Measures a schema against strict mode's documented limits: nesting depth through references,
 * properties, enum values and characters. Never throws.
 */
export function measureStrictSchema(schema: Json): StrictSchemaSize {
  return { depth: strictSchemaDepth(schema), ...tallyStrictSchema(schema) };
}

/** Names each limit of {@link STRICT_LIMITS} a measured schema is past; empty when it keeps within them all. */
export function strictLimitsPassed(size: StrictSchemaSize): string[] {
  const passed: string[] = [];
  if (size.depth > STRICT_LIMITS.depth) {
    passed.push(Number.isFinite(size.depth) ? `${size.depth} levels of nesting` : "nesting too tangled to measure");
  }
  if (size.properties > STRICT_LIMITS.properties) passed.push(`${size.properties} properties`);
  if (size.enumValues > STRICT_LIMITS.enumValues) passed.push(`${size.enumValues} enum values`);
  if (size.characters > STRICT_LIMITS.characters) passed.push(`${size.characters} characters of names and values`);
  return passed;
}

/**
 * Whether a strict schema keeps within the documented size limits for one request, its depth
 * counted through `$ref` as {@link measureStrictSchema} does.
 */
export function withinStrictLimits(schema: Json): boolean {
  return strictLimitsPassed(measureStrictSchema(schema)).length === 0;
}
