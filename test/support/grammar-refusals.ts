/**
 * A checker for the schema constructs grammar-constrained servers refuse, written from their
 * source rather than from the code under test.
 *
 * G1–G9 are llama.cpp. The converter is `common/json-schema-to-grammar.cpp`; the parser it feeds
 * is `src/llama-grammar.cpp` (both read at ggml-org/llama.cpp@011c6c3c, and the older converter at
 * ggerganov/llama.cpp@02e26344, which servers still run):
 * G1  `visit()` ends in `_errors.push_back("Unrecognized schema: " …)` for a node whose type is not
 *     a known name and that no earlier branch took. In the older converter that includes a node
 *     with only a description (what `z.any()` and pydantic `Any` emit) and any node with a
 *     string-only keyword but no type; a boolean schema (`true`/`false`) is not an object and
 *     reaches the same error in both.
 * G2  `_visit_pattern`: "Pattern must start with '^' and end with '$'".
 * G3  `_visit_pattern`: look-aheads and look-behinds "(?=, ?!, ?<=, ?<!) - not supported" (the
 *     older converter has no branch for `(?` at all).
 * G4  `parse_char` in llama-grammar.cpp throws "unknown escape at" for any escape other than
 *     \x \u \U \t \r \n \\ \" \[ \]; the converter passes \d, \w, \s, \- and the like through.
 * G5  `parse_sequence`: a repetition bound over MAX_REPETITION_THRESHOLD (2000) throws "number of
 *     repetitions exceeds sane defaults"; `handle_repetitions` refuses a product of 2000 or more.
 *     minLength/maxLength become char{m,n} and minItems/maxItems item{m-1,n-1}.
 * G6  `resolve_refs`: a `$ref` that is not `#/…` (or https) is "Unsupported ref"; one that does not
 *     resolve is "Error resolving ref".
 * G7  `visit()` reads `schema["format"].get<std::string>()`, so a format that is not a string
 *     throws; and `exclusiveMinimum`/`exclusiveMaximum` are read as int64 on integers, so a
 *     draft-4 boolean throws.
 * G8  `anyOf`/`oneOf` are read with `get<std::vector<json>>()`, so a non-list throws.
 * G9  `allOf` is only merged for object components; this library writes none.
 *
 * V1–V5 are vLLM's xgrammar backend, `has_xgrammar_unsupported_json_features` in
 * `vllm/v1/structured_output/backend_xgrammar.py` (vllm-project/vllm@030141c1), which answers
 * "The provided JSON schema contains features not supported by xgrammar.":
 * V1  `multipleOf` on a number or integer.
 * V2  `uniqueItems`, `contains`, `minContains`, `maxContains` on an array.
 * V3  a string `format` outside STRING_SUPPORTED_FORMATS.
 * V4  a `pattern` or `format` together with `minLength`/`maxLength`.
 * V5  `propertyNames` (refused outright by earlier releases, and beside `properties` or a map by
 *     this one) and `patternProperties` beside `properties` or more than one.
 */

type Node = Record<string, unknown>;

const PRIMITIVES = new Set(["boolean", "number", "integer", "object", "array", "string", "null"]);
const XGRAMMAR_FORMATS = new Set([
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
const UNESCAPED = new Set(["^", "$", ".", "[", "]", "(", ")", "|", "{", "}", "*", "+", "?"]);
const GBNF_ESCAPES = new Set(["x", "u", "U", "t", "r", "n", "\\", '"', "[", "]"]);

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function patternProblems(pattern: string): string[] {
  const problems: string[] = [];
  if (!pattern.startsWith("^") || !pattern.endsWith("$") || pattern.length < 3) problems.push("G2: not anchored with ^ and $");
  if (pattern.includes("(?")) problems.push("G3: has a (? group");
  let inClass = false;
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index];
    if (char === "\\") {
      const next = pattern[index + 1] ?? "";
      if (!GBNF_ESCAPES.has(next) && (inClass || !UNESCAPED.has(next))) problems.push(`G4: escape \\${next}`);
      index++;
    } else if (char === "[") inClass = true;
    else if (char === "]") inClass = false;
  }
  let product = 1;
  for (const match of pattern.matchAll(/\{(\d*)(?:,(\d*))?\}/g)) {
    const numbers = [match[1], match[2]].filter((value): value is string => value !== undefined && value !== "").map(Number);
    for (const value of numbers) if (value > 2000) problems.push(`G5: repetition bound ${value}`);
    product *= Math.max(1, ...numbers);
  }
  if (product >= 2000) problems.push(`G5: nested repetition product ${product}`);
  return problems;
}

/** Lists every construct in `schema` that llama.cpp or vLLM's xgrammar would refuse; empty when none. */
export function grammarRefusals(schema: unknown): string[] {
  const problems: string[] = [];
  const root = schema;
  const resolves = (reference: string): boolean => {
    if (!reference.startsWith("#/")) return false;
    let target: unknown = root;
    for (const raw of reference.slice(2).split("/")) {
      const token = raw.replace(/~1/g, "/").replace(/~0/g, "~");
      if (!isNode(target) || !(token in target)) return false;
      target = target[token];
    }
    return isNode(target);
  };

  const visit = (node: unknown, path: string): void => {
    if (!isNode(node)) {
      problems.push(`G1: ${path} is ${JSON.stringify(node)}, not a schema object`);
      return;
    }
    if ("$ref" in node) {
      if (typeof node.$ref !== "string" || !resolves(node.$ref)) problems.push(`G6: ${path} refers to ${JSON.stringify(node.$ref)}`);
      return;
    }
    for (const key of ["anyOf", "oneOf"]) {
      if (key in node) {
        if (!Array.isArray(node[key])) problems.push(`G8: ${path}.${key} is not a list`);
        else (node[key] as unknown[]).forEach((branch, index) => visit(branch, `${path}.${key}[${index}]`));
      }
    }
    if ("anyOf" in node || "oneOf" in node) return;
    if ("allOf" in node) problems.push(`G9: ${path} has allOf`);
    const type = node.type;
    const types = Array.isArray(type) ? type : type === undefined ? [] : [type];
    for (const item of types) if (typeof item !== "string" || !PRIMITIVES.has(item)) problems.push(`G1: ${path} has type ${JSON.stringify(item)}`);
    const placed =
      types.length > 0 ||
      "const" in node ||
      "enum" in node ||
      "properties" in node ||
      ("additionalProperties" in node && node.additionalProperties !== true) ||
      "items" in node ||
      "prefixItems" in node ||
      Object.keys(node).length === 0;
    if (!placed) problems.push(`G1: ${path} names no type the older converter can place (${Object.keys(node).join(", ")})`);
    if ("format" in node) {
      if (typeof node.format !== "string") problems.push(`G7: ${path}.format is not a string`);
      else if (!XGRAMMAR_FORMATS.has(node.format)) problems.push(`V3: ${path}.format is "${node.format}"`);
    }
    for (const key of ["exclusiveMinimum", "exclusiveMaximum"]) {
      if (key in node && typeof node[key] !== "number") problems.push(`G7: ${path}.${key} is not a number`);
    }
    if ("pattern" in node) {
      if (typeof node.pattern !== "string") problems.push(`G2: ${path}.pattern is not a string`);
      else for (const problem of patternProblems(node.pattern)) problems.push(`${problem} in ${path}.pattern`);
    }
    for (const key of ["minLength", "maxLength", "minItems", "maxItems"]) {
      const value = node[key];
      if (value === undefined) continue;
      if (typeof value !== "number" || !Number.isInteger(value) || value < 0) problems.push(`G5: ${path}.${key} is ${JSON.stringify(value)}`);
      else if (value >= 2000) problems.push(`G5: ${path}.${key} is ${value}`);
    }
    if (("pattern" in node || "format" in node) && ("minLength" in node || "maxLength" in node)) {
      problems.push(`V4: ${path} has a pattern or format with a length bound`);
    }
    if ("multipleOf" in node) problems.push(`V1: ${path} has multipleOf`);
    for (const key of ["uniqueItems", "contains", "minContains", "maxContains"]) if (key in node) problems.push(`V2: ${path} has ${key}`);
    if ("propertyNames" in node) problems.push(`V5: ${path} has propertyNames`);
    if (isNode(node.patternProperties) && ("properties" in node || Object.keys(node.patternProperties).length > 1)) {
      problems.push(`V5: ${path} has patternProperties beside properties`);
    }
    if (isNode(node.properties)) {
      for (const key of Object.keys(node.properties)) visit(node.properties[key], `${path}.properties.${key}`);
    } else if ("properties" in node) {
      problems.push(`G1: ${path}.properties is not an object`);
    }
    if ("additionalProperties" in node && typeof node.additionalProperties !== "boolean") visit(node.additionalProperties, `${path}.additionalProperties`);
    if (Array.isArray(node.items)) node.items.forEach((item, index) => visit(item, `${path}.items[${index}]`));
    else if ("items" in node) visit(node.items, `${path}.items`);
    if (Array.isArray(node.prefixItems)) node.prefixItems.forEach((item, index) => visit(item, `${path}.prefixItems[${index}]`));
  };

  visit(schema, "$");
  if (isNode(schema)) {
    for (const container of ["$defs", "definitions"]) {
      const defs = schema[container];
      if (isNode(defs)) for (const name of Object.keys(defs)) visit(defs[name], `$.${container}.${name}`);
    }
  }
  return problems;
}
