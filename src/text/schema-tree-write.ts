/**
 * @module text/schema-tree-write
 * How schema-compat's two rewriters write their output: every node's keys in one fixed order,
 * notes on the keywords a rewrite could not keep, and the rewritten definitions a tree still
 * reaches, with chains of bare references settled.
 *
 * Every function here takes anything and never throws; a walk stops past a bounded depth.
 */

import { type Json, type JsonObject, MAX_DEPTH, isObject, setKey } from "./schema-tree.js";

/** Keyword order every rewritten node is written in, so equal schemas come out byte-equal. */
const KEY_ORDER = [
  "$ref",
  "type",
  "title",
  "description",
  "enum",
  "const",
  "default",
  "anyOf",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "minItems",
  "maxItems",
  "pattern",
  "format",
  "minLength",
  "maxLength",
  "minimum",
  "exclusiveMinimum",
  "maximum",
  "exclusiveMaximum",
  "multipleOf",
  "$defs",
];

/** Rewrites a node with its keys in the fixed order; keys outside the list are dropped. */
export function ordered(node: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of KEY_ORDER) {
    if (Object.prototype.hasOwnProperty.call(node, key) && node[key] !== undefined) setKey(out, key, node[key] as Json);
  }
  return out;
}

/** A short, single-line JSON rendering of a value for a description note. */
export function brief(value: Json): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? "null";
  } catch {
    text = "null";
  }
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

/** Appends notes about keywords a rewrite could not keep to a description. */
export function describeWithNotes(description: string | undefined, notes: readonly string[]): string | undefined {
  if (notes.length === 0) return description;
  const note = `(${notes.join("; ")})`;
  return description ? `${description} ${note}` : note;
}

/** Every `$ref` in a rewritten tree, in order of appearance. */
export function referencesIn(node: Json, into: Set<string>, depth = 0): Set<string> {
  if (depth > MAX_DEPTH * 4) return into;
  if (Array.isArray(node)) {
    for (const item of node) referencesIn(item, into, depth + 1);
  } else if (isObject(node)) {
    for (const key of Object.keys(node)) {
      const value = node[key] as Json;
      if (key === "$ref" && typeof value === "string") into.add(value);
      else referencesIn(value, into, depth + 1);
    }
  }
  return into;
}

/**
 * The rewritten definitions a tree still reaches, sorted by name, ready to sit under the root's
 * `$defs`; undefined when it reaches none.
 */
export function reachableDefinitions(tree: Json, rewritten: Map<string, JsonObject>): JsonObject | undefined {
  const reached = new Set<string>();
  const queue = [...referencesIn(tree, new Set())];
  while (queue.length > 0) {
    const reference = queue.shift() as string;
    const name = nameFromPointer(reference);
    if (name === undefined || reached.has(name)) continue;
    const schema = rewritten.get(name);
    if (schema === undefined) continue;
    reached.add(name);
    queue.push(...referencesIn(schema, new Set()));
  }
  if (reached.size === 0) return undefined;
  const out: JsonObject = {};
  for (const name of [...reached].sort()) setKey(out, name, rewritten.get(name) as JsonObject);
  return out;
}

/** The definition name a `#/$defs/…` pointer names, or undefined for any other reference. */
export function nameFromPointer(reference: string): string | undefined {
  if (!reference.startsWith("#/$defs/")) return undefined;
  const token = reference.slice("#/$defs/".length);
  if (token.includes("/")) return undefined;
  return token.replace(/~1/g, "/").replace(/~0/g, "~");
}

/** Whether a rewritten node is a reference (converters ignore what sits beside one). */
function isBareReference(node: JsonObject): boolean {
  return typeof node.$ref === "string";
}

/**
 * Follows a chain of bare references from `node` through the rewritten definitions and answers
 * the node it ends at, or undefined when the chain comes back on itself (a schema that is only
 * references to itself, which no converter can place). `start` names the definition `node`
 * belongs to, if any.
 */
export function settleReference(node: JsonObject, rewritten: Map<string, JsonObject>, start?: string): JsonObject | undefined {
  const seen = new Set<string>(start === undefined ? [] : [start]);
  let current = node;
  while (isBareReference(current)) {
    const name = nameFromPointer(current.$ref as string);
    if (name === undefined) return current;
    if (seen.has(name)) return undefined;
    seen.add(name);
    const next = rewritten.get(name);
    if (next === undefined) return current;
    current = next;
  }
  return current;
}
