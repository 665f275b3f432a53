/**
 * A checker of OpenAI's documented strict-mode rules for a JSON Schema, written from the
 * documentation rather than from the code under test, so a rewrite that stops meeting a rule
 * fails the suite.
 *
 * Source of every rule: OpenAI, "Structured Outputs", section "Supported schemas"
 * (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas), which also
 * governs function parameters with `strict: true` (Function calling guide, "Strict mode":
 * https://platform.openai.com/docs/guides/function-calling#strict-mode). Each violation names the
 * rule it breaks, as R1…R12 below.
 *
 * R1  "Root objects must not be anyOf and must be an object."
 * R2  "additionalProperties: false must always be set in objects."
 * R3  "All fields must be required" — every key of `properties` is in `required`.
 * R4  Supported types are string, number, boolean, integer, object, array, enum and anyOf; a
 *     schema names one (`type`), or is an `anyOf`, or a `$ref`. A nullable field is written as a
 *     type list with "null" ("emulate an optional parameter … union type with null").
 * R5  Only the supported keywords: `pattern` and `format` for strings; `multipleOf`, `maximum`,
 *     `exclusiveMaximum`, `minimum`, `exclusiveMinimum` for numbers; `minItems`, `maxItems` for
 *     arrays; plus `enum`, `const`, `anyOf`, `$ref`, `$defs`/`definitions` ("Definitions are
 *     supported"), `properties`, `required`, `additionalProperties`, `items`, `type`,
 *     `description`, `title`. Composition by `allOf`, `not`, `if`/`then`/`else`,
 *     `dependentRequired`, `dependentSchemas` is listed as not supported, and `default` is
 *     refused ("'default' is not permitted").
 * R6  Supported formats: date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid.
 * R7  "Each nested schema [of anyOf] must be a valid JSON Schema per this subset."
 * R8  `$ref` is supported for definitions and for recursion through `#`; a reference resolves
 *     inside the document and stands alone (a sibling keyword is refused).
 * R9  "A schema may have up to 5000 object properties total, with up to 10 levels of nesting."
 *     Nesting is read as the server meets it: a `$ref` adds the depth of what it points at, where
 *     it is used, and a reference back into a definition already entered on the same path ends
 *     that path (recursion is supported, so it counts one turn round).
 * R10 "A schema may have up to 1000 enum values across all enum properties."
 * R11 "The total string length of all property names, definition names, enum values, and const
 *     values cannot exceed 120,000 characters."
 * R12 An array schema says what its items are (`items`, a single schema), so the output can be
 *     constrained; and an enum on a nullable field lists null, or null could never be sent.
 */

type Node = Record<string, unknown>;

const TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);
const FORMATS = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"]);
const ALLOWED = new Set([
  "type",
  "description",
  "title",
  "enum",
  "const",
  "anyOf",
  "$ref",
  "$defs",
  "definitions",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "pattern",
  "format",
  "multipleOf",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "minItems",
  "maxItems",
]);

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function resolves(root: Node, reference: string): boolean {
  if (reference === "#") return true;
  if (!reference.startsWith("#/")) return false;
  let target: unknown = root;
  for (const raw of reference.slice(2).split("/")) {
    const token = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isNode(target) || !Object.prototype.hasOwnProperty.call(target, token)) return false;
    target = target[token];
  }
  return isNode(target);
}

function target(root: Node, reference: string): Node | undefined {
  if (reference === "#") return root;
  if (!reference.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of reference.slice(2).split("/")) {
    const token = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isNode(node) || !Object.prototype.hasOwnProperty.call(node, token)) return undefined;
    node = node[token];
  }
  return isNode(node) ? node : undefined;
}

/**
 * The deepest object nesting with every `$ref` written out in place, each path ending where it
 * would enter a definition it is already inside. Each path is followed on its own; only the depth
 * under a reference whose expansion ended no path early is remembered, which is the most that
 * reference can add on any path (so the answer errs, if at all, towards deeper). Past a million
 * steps it throws rather than run on.
 */
export function nestingThroughReferences(root: Node): number {
  const clean = new Map<string, number>();
  let work = 0;
  /** The depth under a node, and whether some path below it ended at recursion. */
  const walk = (node: unknown, inside: ReadonlySet<string>): [number, boolean] => {
    if (++work > 1_000_000) throw new Error("nestingThroughReferences: too many paths to follow");
    if (Array.isArray(node)) {
      let deepest = 0;
      let cut = false;
      for (const item of node) {
        const [depth, ended] = walk(item, inside);
        deepest = Math.max(deepest, depth);
        cut ||= ended;
      }
      return [deepest, cut];
    }
    if (!isNode(node)) return [0, false];
    if (typeof node.$ref === "string") {
      const reference = node.$ref;
      const next = target(root, reference);
      if (next === undefined) return [0, false];
      if (inside.has(reference)) return [0, true];
      const known = clean.get(reference);
      if (known !== undefined) return [known, false];
      const [depth, cut] = walk(next, new Set([...inside, reference]));
      if (!cut) clean.set(reference, depth);
      return [depth, cut];
    }
    let deepest = 0;
    let cut = false;
    for (const [key, value] of Object.entries(node)) {
      if (key === "$defs" || key === "definitions" || key === "enum" || key === "const") continue;
      const children = key === "properties" && isNode(value) ? Object.values(value) : [value];
      for (const child of children) {
        const [depth, ended] = walk(child, inside);
        deepest = Math.max(deepest, depth);
        cut ||= ended;
      }
    }
    return [(isNode(node.properties) ? 1 : 0) + deepest, cut];
  };
  return walk(root, new Set(["#"]))[0];
}

/** Lists every way `schema` breaks OpenAI's strict-mode rules; empty when it meets them all. */
export function strictModeViolations(schema: unknown): string[] {
  const problems: string[] = [];
  if (!isNode(schema)) return ["R1: the root is not an object schema"];
  if (schema.type !== "object") problems.push(`R1: the root's type is ${JSON.stringify(schema.type)}, not "object"`);
  if ("anyOf" in schema) problems.push("R1: the root is an anyOf");

  let properties = 0;
  let enumValues = 0;
  let characters = 0;
  for (const container of ["$defs", "definitions"]) {
    const defs = schema[container];
    if (isNode(defs)) for (const name of Object.keys(defs)) characters += name.length;
  }

  const visit = (node: unknown, path: string, objectDepth: number, isRoot: boolean): void => {
    if (!isNode(node)) {
      problems.push(`R4: ${path} is ${JSON.stringify(node)}, not a schema`);
      return;
    }
    for (const key of Object.keys(node)) {
      if (!ALLOWED.has(key)) problems.push(`R5: ${path} uses "${key}"`);
      if ((key === "$defs" || key === "definitions") && !isRoot) problems.push(`R5: ${path} has ${key} below the root`);
    }
    if (typeof node.$ref === "string" || "$ref" in node) {
      const reference = node.$ref;
      if (typeof reference !== "string" || !resolves(schema, reference))
        problems.push(`R8: ${path} refers to ${JSON.stringify(reference)}, which does not resolve`);
      const siblings = Object.keys(node).filter((key) => key !== "$ref");
      if (siblings.length > 0) problems.push(`R8: ${path} has keywords beside $ref: ${siblings.join(", ")}`);
      return;
    }
    if ("anyOf" in node) {
      if (!Array.isArray(node.anyOf) || node.anyOf.length === 0) problems.push(`R7: ${path}.anyOf is not a non-empty list`);
      else node.anyOf.forEach((branch, index) => visit(branch, `${path}.anyOf[${index}]`, objectDepth, false));
      if ("type" in node) problems.push(`R7: ${path} has both anyOf and type`);
      return;
    }
    const type = node.type;
    const types = Array.isArray(type) ? type : [type];
    if (type === undefined) {
      problems.push(`R4: ${path} names no type`);
      return;
    }
    for (const item of types) if (typeof item !== "string" || !TYPES.has(item)) problems.push(`R4: ${path} has type ${JSON.stringify(item)}`);
    if (Array.isArray(type) && !(type.length === 2 && type[1] === "null" && type[0] !== "null")) {
      problems.push(`R4: ${path} has type list ${JSON.stringify(type)}; only [T, "null"] is the documented form`);
    }
    const main = types[0];
    if (typeof node.format === "string" && !FORMATS.has(node.format)) problems.push(`R6: ${path} has format "${node.format}"`);
    if ("format" in node && main !== "string") problems.push(`R5: ${path} has format on a ${String(main)}`);
    if ("pattern" in node && main !== "string") problems.push(`R5: ${path} has pattern on a ${String(main)}`);
    if (Array.isArray(node.enum)) {
      enumValues += node.enum.length;
      for (const value of node.enum) characters += typeof value === "string" ? value.length : String(value).length;
      if (types.includes("null") && !node.enum.includes(null)) problems.push(`R12: ${path} may be null but its enum does not list null`);
    } else if ("enum" in node) {
      problems.push(`R5: ${path}.enum is not a list`);
    }
    if (typeof node.const === "string") characters += node.const.length;
    if (main === "object") {
      const depth = objectDepth + 1;
      if (depth > 10) problems.push(`R9: ${path} is nested ${depth} objects deep`);
      if (node.additionalProperties !== false) problems.push(`R2: ${path} does not set additionalProperties: false`);
      if (!isNode(node.properties)) {
        problems.push(`R3: ${path} has no properties object`);
        return;
      }
      const required = Array.isArray(node.required) ? node.required : undefined;
      if (required === undefined) problems.push(`R3: ${path} has no required list`);
      for (const key of Object.keys(node.properties)) {
        properties++;
        characters += key.length;
        if (required !== undefined && !required.includes(key)) problems.push(`R3: ${path}.${key} is not required`);
        visit(node.properties[key], `${path}.properties.${key}`, depth, false);
      }
      for (const name of required ?? []) {
        if (typeof name !== "string" || !Object.prototype.hasOwnProperty.call(node.properties, name)) {
          problems.push(`R3: ${path} requires ${JSON.stringify(name)}, which is not a property`);
        }
      }
    } else if (main === "array") {
      if (!isNode(node.items)) problems.push(`R12: ${path} is an array without a single items schema`);
      else visit(node.items, `${path}.items`, objectDepth, false);
    } else if ("properties" in node || "items" in node) {
      problems.push(`R5: ${path} has object or array keywords on a ${String(main)}`);
    }
  };

  visit(schema, "$", 0, true);
  const expanded = nestingThroughReferences(schema);
  if (expanded > 10) problems.push(`R9: nested ${expanded} objects deep once references are followed`);
  for (const container of ["$defs", "definitions"]) {
    const defs = schema[container];
    if (isNode(defs)) for (const name of Object.keys(defs)) visit(defs[name], `$.${container}.${name}`, 0, false);
  }
  if (properties > 5000) problems.push(`R9: ${properties} properties in all`);
  if (enumValues > 1000) problems.push(`R10: ${enumValues} enum values in all`);
  if (characters > 120_000) problems.push(`R11: ${characters} characters of names and values`);
  return problems;
}
