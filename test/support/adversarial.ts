/**
 * Adversarial inputs for the functions that read text from outside: each shape is one short unit
 * repeated to a size, the way a hostile reply, page or document would be built to make a parser
 * rescan or backtrack. The bench times them at 25–200 KB; the property tests feed the same shapes
 * at small sizes and check the documented results still come out.
 */

import type { ToolDefinition } from "../../src/shapes/config.js";

/** One input shape: its name and how to build it at about `bytes` characters. */
export interface Shape<T = string> {
  readonly name: string;
  readonly build: (bytes: number) => T;
}

/** `unit` repeated until the whole is about `bytes` long (at least once), between `prefix` and `suffix`. */
export function fill(unit: string, bytes: number, prefix = "", suffix = ""): string {
  const count = Math.max(1, Math.floor((bytes - prefix.length - suffix.length) / unit.length));
  return prefix + unit.repeat(count) + suffix;
}

/** How many whole units {@link fill} puts in `bytes`. */
export function units(unit: string, bytes: number, prefix = "", suffix = ""): number {
  return Math.max(1, Math.floor((bytes - prefix.length - suffix.length) / unit.length));
}

const text = (name: string, unit: string, prefix = "", suffix = ""): Shape => ({ name, build: (bytes) => fill(unit, bytes, prefix, suffix) });

/** Argument text a model might write: open containers, stray quotes, escapes, comments, layers. */
export const ARGUMENT_SHAPES: readonly Shape[] = [
  text("open objects", '{"a":'),
  text("open arrays", "["),
  text("unescaped inner quotes", '"x ', '{"k": "', '"}'),
  text("apostrophes before spaces", "' ", "{'k': '", "'}"),
  text("commas and comments", '"a":1,/**/ ', "{", "}"),
  text("backslashes", "\\q", '{"k": "', '"}'),
  text("bare words", "word ", "{k: ", "}"),
  { name: "three encoded layers", build: (bytes) => JSON.stringify(JSON.stringify(JSON.stringify({ k: "v".repeat(Math.max(1, Math.floor(bytes / 8))) }))) },
];

/** Replies with tool-call markup packed close: unfinished markers, and well-formed calls repeated. */
export const MARKUP_SHAPES: readonly Shape[] = [
  text("<tool_call>{ repeated", "<tool_call>{"),
  text("[TOOL_CALLS][ repeated", "[TOOL_CALLS]["),
  text("[TOOL_CALLS]a{ repeated", "[TOOL_CALLS]a{"),
  text("<|python_tag|>{ repeated", "<|python_tag|>{"),
  text("<function= repeated", "<function="),
  text("<function=a> repeated", "<function=a>"),
  text("<parameter= inside a call", "<parameter=", "<function=a>"),
  text("harmony call headers", "<|channel|>commentary to=a "),
  text("harmony headers with long names", `<|channel|>commentary to=${"a".repeat(300)} `),
  text("harmony role headers", "<|start|>assistant to=functions.a<|channel|>"),
  text("bare role recipients", "to=functions.a "),
  text("<tool_call>{ then one close", "<tool_call>{", "", "</tool_call>"),
  text("well-formed <function=a></function>", "<function=a></function>"),
  text("well-formed <tool_call> blocks", '<tool_call>{"name":"a","arguments":{}}</tool_call>'),
  text("open braces", "{"),
  text("fences holding braces", "```\n{\n"),
  text("closing think tags", "</think>x"),
];

/** Replies for parseJson: open brackets, fences, fenced reasoning, almost-JSON in prose. */
export const JSON_REPLY_SHAPES: readonly Shape[] = [
  text("open braces", "{"),
  text("open brackets", "["),
  text("open objects", '{"a":'),
  text("fences holding braces", "```\n{\n"),
  text("unclosed <think>", "<think>{"),
  text("almost-JSON in prose", "Sure: {'a': ["),
  text("closed objects in prose", 'x {"a": 1} '),
];

/** Replies for stripThinking and FenceSplitter: tags packed close, unclosed, orphaned, partial. */
export const FENCE_SHAPES: readonly Shape[] = [
  text("<think>a</think> repeated", "<think>a</think>"),
  text("unclosed <think> repeated", "<think>"),
  text("closing tags repeated", "</think>b"),
  text("harmony analysis blocks", "<|channel|>analysis<|message|>x<|end|>"),
  text("tag starts with nothing after", "<"),
  text("half harmony tags", "<|"),
  text("Kimi fences", "◁think▷a◁/think▷"),
  text("answer then one fence at the end", "answer ", "", "<think>x</think>"),
];

/** A document as parseSpec reads it, built from one long or many short things. */
export type Document = Record<string, unknown>;

const doc = (name: string, build: (bytes: number) => Document): Shape<Document> => ({ name, build });
const SPEC = "agent-core/1";

/** Agent documents: long field names, `${` runs, credential-shaped strings, long lists. */
export const SPEC_SHAPES: readonly Shape<Document>[] = [
  doc("an upper-case field name", (bytes) => ({ spec: SPEC, model: { [fill("A", bytes)]: 1 } })),
  doc("a camelCase field name", (bytes) => ({ spec: SPEC, model: { [fill("aB", bytes)]: 1 } })),
  doc("a ${ run in a base URL", (bytes) => ({ spec: SPEC, model: { baseUrl: fill("${", bytes, "http://", "@host/v1") } })),
  doc("a ${ run in extraBody", (bytes) => ({ spec: SPEC, model: { extraBody: { a: fill("${", bytes) } } })),
  doc("distinct tools.servers", (bytes) => ({ spec: SPEC, tools: { servers: Array.from({ length: units("s0000,", bytes) }, (_, i) => `s${i}`) } })),
  doc("repeated tools.servers", (bytes) => ({ spec: SPEC, tools: { servers: Array.from({ length: units("s0000,", bytes) }, () => "s") } })),
  doc("many prompt entries", (bytes) => ({
    spec: SPEC,
    prompt: Array.from({ length: units('{"id":"p0000","text":"t"},', bytes) }, (_, i) => ({ id: `p${i}`, text: "t" })),
  })),
  doc("many requires entries", (bytes) => ({ spec: SPEC, requires: Array.from({ length: units('"tools",', bytes) }, () => "tools") })),
  doc("credential-named keys in extraBody", (bytes) => ({
    spec: SPEC,
    model: { extraBody: Object.fromEntries(Array.from({ length: units('"k0000_api_key":1,', bytes) }, (_, i) => [`k${i}_api_key`, 1])) },
  })),
  doc("a long query string in a task URL", (bytes) => ({ spec: SPEC, tasks: { t: { baseUrl: fill("a=b&", bytes, "http://h/v1?") } } })),
  doc("bundled servers with flag-dense args", (bytes) => ({
    spec: SPEC,
    requires: ["bundle"],
    bundle: { mcpServers: [{ name: "s", command: "x", args: Array.from({ length: units('"--api-key",', bytes) }, () => "--api-key") }] },
  })),
];

/** Values for findSpecSecrets: the document shapes plus long strings of the shapes it tests. */
export const SECRET_SHAPES: readonly Shape<Document>[] = [
  ...SPEC_SHAPES,
  doc("a key-prefixed long string", (bytes) => ({ value: fill("a", bytes, "sk-") })),
  doc("a high-entropy long string", (bytes) => ({ value: fill("aZ3q9Xk7LmP2wR8t", bytes) })),
  doc("a URL with a long path", (bytes) => ({ url: fill("/seg", bytes, "https://h") })),
  doc("a URL with a long fragment", (bytes) => ({ url: fill("a=b&", bytes, "https://h/#") })),
  doc("a command with many words", (bytes) => ({ bundle: { mcpServers: [{ name: "s", command: fill("run --x ", bytes) }] } })),
  doc("header-shaped args", (bytes) => ({
    bundle: {
      mcpServers: [{ name: "s", command: "x", args: Array.from({ length: units('"--header","X: y",', bytes) }, (_, i) => (i % 2 ? "X: y" : "--header")) }],
    },
  })),
  doc("deeply nested arrays", (bytes) => {
    const depth = Math.max(1, Math.floor(bytes / 2));
    return JSON.parse(`{"a":${"[".repeat(depth)}${"]".repeat(depth)}}`) as Document;
  }),
];

/** Requests for preselectByKeywords: long words, camelCase runs, unspaced scripts, many pairs. */
export const REQUEST_SHAPES: readonly Shape[] = [
  text("one long upper-case word", "A"),
  text("a camelCase run", "aB"),
  text("Chinese text", "读取文件"),
  text("many short words", "read file "),
  text("a long word ending in -ses", "s", "x", "ses"),
];

/** Text for untrusted: fence tags in every disguise, and runs of what a tag starts with. */
export const UNTRUSTED_SHAPES: readonly Shape[] = [
  text("closing fence tags", "</untrusted>"),
  text("less-than signs", "<"),
  text("less-than, slashes and spaces", "< / "),
  text("invisible characters after <", "<\u200b"),
  text("fullwidth tags", "＜／ｕｎｔｒｕｓｔｅｄ＞"),
  text("a tag word with combining marks", "<u\u0301n\u0301t\u0301"),
  text("plain text", "plain words "),
];

/** Server-sent events for streamTurn's reader: one event spread over many data lines, and many deltas. */
export const SSE_SHAPES: readonly Shape[] = [
  text("one event over many data lines", "data: x\n", 'data: {"choices":[{"delta":{"content":"', '"}}]}\n\n'),
  text("many content deltas", 'data: {"choices":[{"delta":{"content":"<think>a</think>"}}]}\n\n'),
];

/** Base URLs a host might be handed: trailing slashes, long paths, long hosts. */
export const URL_SHAPES: readonly Shape[] = [
  text("trailing slashes", "/", "http://h/v1"),
  text("a long path", "/v1", "http://h"),
  text("slashes then a letter", "/", "http://h/v1", "x"),
];

/**
 * Error text for the failure classifiers: near misses of their wordings repeated, so a pattern
 * that backtracked over a partial match would rescan; each ends without the word that completes it.
 */
export const ERROR_SHAPES: readonly Shape[] = [
  text("near misses of an overflow", "exceeds the context ", "400 "),
  text("open backticks", "`inputs` tokens + `", "Input validation error: "),
  text("half a rate limit", "open api qps request ", "[18] "),
  text("half a crash", "llama runner process ", "500 "),
  text("half a loading", "is currently ", "Model m "),
];

/** One tool whose parameters hold `defs` and start at `root`. */
function toolWith(root: Record<string, unknown>, defs: Record<string, unknown>): ToolDefinition[] {
  return [{ type: "function", function: { name: "tangle", parameters: { ...root, $defs: defs } as ToolDefinition["function"]["parameters"] } }];
}

/** How many definitions of about `each` characters fit in `bytes`. */
function definitionCount(bytes: number, each: number): number {
  return Math.max(2, Math.floor(bytes / each));
}

/** Tool schemas for sanitizeTools: references built to make a depth count walk a definition again and again. */
export const SCHEMA_SHAPES: readonly Shape<ToolDefinition[]>[] = [
  {
    name: "one definition used by every property",
    build: (bytes) => {
      const properties: Record<string, unknown> = {};
      for (let index = 0; index < definitionCount(bytes, 32); index++) properties[`p${index}`] = { $ref: "#/$defs/d" };
      return toolWith({ type: "object", properties }, { d: { type: "object", properties: { a: { type: "object", properties: { b: { type: "string" } } } } } });
    },
  },
  {
    name: "a chain of definitions, each used twice by the one before",
    build: (bytes) => {
      const count = definitionCount(bytes, 110);
      const defs: Record<string, unknown> = {};
      for (let index = 0; index < count; index++) {
        const next = `#/$defs/d${index + 1}`;
        defs[`d${index}`] = index + 1 < count ? { anyOf: [{ $ref: next }, { type: "array", items: { $ref: next } }] } : { type: "string" };
      }
      return toolWith({ type: "object", properties: { start: { $ref: "#/$defs/d0" } } }, defs);
    },
  },
  {
    name: "definitions that all refer to one another",
    build: (bytes) => {
      const count = definitionCount(bytes, 150);
      const defs: Record<string, unknown> = {};
      for (let index = 0; index < count; index++) {
        const refs = [0, index + 1, index + 2].map((target) => ({ $ref: `#/$defs/d${target % count}` }));
        defs[`d${index}`] = { type: "object", properties: { next: { anyOf: refs } } };
      }
      return toolWith({ type: "object", properties: { start: { $ref: "#/$defs/d0" } } }, defs);
    },
  },
];
