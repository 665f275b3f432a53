import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { APIError } from "openai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { JsonSchema, ToolDefinition } from "../../src/shapes/config.js";
import { isGrammarError, omitOptionalNulls, relaxSchema, relaxTools, sanitizeSchema, sanitizeTools } from "../../src/text/schema-compat.js";
import { grammarRefusals } from "../support/grammar-refusals.js";
import { measureStrictSchema } from "../../src/text/schema-strict-size.js";
import { nestingThroughReferences, strictModeViolations } from "../support/strict-mode.js";

interface FixtureTool {
  name: string;
  description?: string;
  kind?: string;
  variant?: string;
  inputSchema: JsonSchema;
}

interface FixtureFile {
  server: string;
  source: { repo: string; path: string; commit?: string; note?: string };
  tools: FixtureTool[];
}

const fixtureDir = fileURLToPath(new URL("../fixtures/mcp-schemas/", import.meta.url));
const fixtureFiles: FixtureFile[] = readdirSync(fixtureDir)
  .filter((file) => file.endsWith(".json"))
  .sort()
  .map((file) => JSON.parse(readFileSync(fixtureDir + file, "utf8")) as FixtureFile);
const fixtures = fixtureFiles.flatMap((file) =>
  file.tools.map((tool) => ({
    label: `${file.server} › ${tool.name}${tool.kind ? ` (${tool.kind})` : ""}${tool.variant ? ` [${tool.variant}]` : ""}`,
    server: file.server,
    tool,
  })),
);

function asTool(tool: FixtureTool): ToolDefinition {
  return {
    type: "function",
    function: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: tool.inputSchema },
  };
}

function bytes(value: unknown): string {
  return JSON.stringify(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

function collect(schema: unknown, test: (node: Record<string, unknown>) => boolean): boolean {
  if (Array.isArray(schema)) return schema.some((item) => collect(item, test));
  if (typeof schema !== "object" || schema === null) return false;
  const node = schema as Record<string, unknown>;
  return test(node) || Object.values(node).some((value) => collect(value, test));
}

describe("schema-compat fixtures", () => {
  it("holds at least 40 real MCP schemas from at least 8 servers, each citing its source", () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(40);
    expect(new Set(fixtures.map((fixture) => fixture.server)).size).toBeGreaterThanOrEqual(8);
    for (const file of fixtureFiles) {
      expect(file.source.repo).toMatch(/^[\w.-]+\/[\w.-]+$/);
      expect(file.source.path.length).toBeGreaterThan(0);
    }
  });

  it("covers the constructs that break strict and grammar servers", () => {
    const schemas = fixtures.map((fixture) => fixture.tool.inputSchema);
    const has = (test: (node: Record<string, unknown>) => boolean): boolean => schemas.some((schema) => collect(schema, test));
    expect(has((node) => Array.isArray(node.anyOf))).toBe(true);
    expect(has((node) => Array.isArray(node.oneOf))).toBe(true);
    expect(has((node) => Array.isArray(node.type) && node.type.includes("null"))).toBe(true);
    expect(has((node) => typeof node.$ref === "string")).toBe(true);
    expect(has((node) => typeof node.$defs === "object")).toBe(true);
    expect(has((node) => typeof node.format === "string")).toBe(true);
    expect(has((node) => node.additionalProperties === true)).toBe(true);
    expect(has((node) => node.type === "object" && node.properties === undefined)).toBe(true);
    expect(has((node) => node.description !== undefined && node.type === undefined && node.anyOf === undefined && node.$ref === undefined)).toBe(true);
    expect(has((node) => typeof node.maxLength === "number" || typeof node.minLength === "number")).toBe(true);
    expect(has((node) => typeof node.pattern === "string")).toBe(true);
  });

  it("keeps the anchored patterns a real server sends, for both kinds of server", () => {
    const radar = fixtures.filter((fixture) => fixture.server === "cloudflare-radar");
    const patterns = (schema: unknown): string[] => {
      const found: string[] = [];
      collect(schema, (node) => {
        if (typeof node.pattern === "string") found.push(node.pattern);
        return false;
      });
      return found;
    };
    for (const { tool } of radar) {
      const expected = patterns(tool.inputSchema);
      expect(patterns(sanitizeSchema(tool.inputSchema))).toEqual(expected);
      expect(patterns(relaxSchema(tool.inputSchema))).toEqual(expected);
    }
    expect(radar.flatMap(({ tool }) => patterns(tool.inputSchema)).length).toBeGreaterThan(5);
  });

  describe.each(fixtures)("$label", ({ tool }) => {
    it("sanitizes to what strict mode takes: strict and meeting every rule, or strict off with a notice", () => {
      const notices: string[] = [];
      const [declared] = sanitizeTools([asTool(tool)], { onNotice: (text) => notices.push(text) });
      if (declared?.function.strict === true) {
        expect(strictModeViolations(declared.function.parameters)).toEqual([]);
        expect(strictModeViolations(sanitizeSchema(tool.inputSchema))).toEqual([]);
        expect(notices).toEqual([]);
      } else {
        expect(declared?.function.strict).toBe(false);
        expect(notices).toHaveLength(1);
        expect(notices[0]).toContain(tool.name);
      }
    });

    it("relaxes to a schema with nothing llama.cpp or xgrammar refuses", () => {
      expect(grammarRefusals(relaxSchema(tool.inputSchema))).toEqual([]);
      const [relaxed] = relaxTools(sanitizeTools([asTool(tool)]));
      expect(grammarRefusals(relaxed?.function.parameters)).toEqual([]);
      expect(relaxed?.function).not.toHaveProperty("strict");
    });

    it("sanitizes idempotently and byte-stably without touching the input", () => {
      const before = bytes(tool.inputSchema);
      const once = sanitizeSchema(tool.inputSchema);
      expect(bytes(sanitizeSchema(once))).toBe(bytes(once));
      expect(bytes(sanitizeSchema(JSON.parse(before) as JsonSchema))).toBe(bytes(once));
      expect(bytes(sanitizeTools([asTool(tool)]))).toBe(bytes(sanitizeTools([asTool(tool)])));
      expect(bytes(sanitizeTools(sanitizeTools([asTool(tool)])))).toBe(bytes(sanitizeTools([asTool(tool)])));
      expect(bytes(relaxSchema(tool.inputSchema))).toBe(bytes(relaxSchema(JSON.parse(before) as JsonSchema)));
      expect(bytes(tool.inputSchema)).toBe(before);
    });
  });
});

/** How many schema steps (properties, items, branches) the deepest path goes below the root. */
function schemaSteps(schema: unknown): number {
  if (typeof schema !== "object" || schema === null) return 0;
  let deepest = 0;
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (!["properties", "items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems"].includes(key)) continue;
    const children = key === "properties" ? Object.values(value as object) : Array.isArray(value) ? value : [value];
    for (const child of children) deepest = Math.max(deepest, 1 + schemaSteps(child));
  }
  return deepest;
}

describe("the deepest real MCP tools", () => {
  // MongoDB's explain and export, and Postman's collection tools, nest 11 to 13 schema steps below
  // the root, arrays and unions counted as steps. OpenAI's limit is on object nesting (the root
  // object is level 1), where they reach 6 and 8, so they keep strict mode and meet every rule.
  const deepest: Array<[server: string, name: string, steps: number, levels: number]> = [
    ["mongodb-mcp-server", "explain", 11, 6],
    ["mongodb-mcp-server", "export", 11, 6],
    ["postman-mcp-server", "createCollection", 13, 8],
    ["postman-mcp-server", "putCollection", 13, 8],
    ["postman-mcp-server", "updateCollectionRequest", 8, 4],
  ];

  it.each(deepest)("%s › %s keeps strict mode and meets every rule", (server, name, steps, levels) => {
    const fixture = fixtures.find((entry) => entry.server === server && entry.tool.name === name);
    expect(fixture).toBeDefined();
    expect(schemaSteps(fixture!.tool.inputSchema)).toBe(steps);
    const notices: string[] = [];
    const [declared] = sanitizeTools([asTool(fixture!.tool)], { onNotice: (text) => notices.push(text) });
    expect(measureStrictSchema(declared!.function.parameters as never).depth).toBe(levels);
    expect(nestingThroughReferences(declared!.function.parameters as Record<string, unknown>)).toBe(levels);
    expect(declared?.function.strict).toBe(true);
    expect(strictModeViolations(declared?.function.parameters)).toEqual([]);
    expect(notices).toEqual([]);
  });

  it("go with strict off, said once each, once wrapped five objects deeper than the server wrote them", () => {
    const wrap = (schema: JsonSchema, levels: number): JsonSchema =>
      levels === 0 ? schema : { type: "object", properties: { inner: wrap(schema, levels - 1) }, required: ["inner"] };
    const tools = deepest.map(([server, name]) => fixtures.find((entry) => entry.server === server && entry.tool.name === name)!.tool);
    const notices: string[] = [];
    const declared = sanitizeTools(
      tools.map((tool) => asTool({ ...tool, inputSchema: wrap(tool.inputSchema, 5) })),
      { onNotice: (text) => notices.push(text) },
    );
    // 6 + 5 and 8 + 5 levels are past the limit; updateCollectionRequest's 4 + 5 is not.
    expect(declared.map((tool) => tool.function.strict)).toEqual([false, false, false, false, true]);
    expect(notices.map((text) => text.match(/schema of (\S+)/)?.[1])).toEqual(["explain", "export", "createCollection", "putCollection"]);
    expect(notices[0]).toContain("11 levels of nesting");
    expect(notices[2]).toContain("13 levels of nesting");
  });
});

describe("sanitizeTools past strict mode's nesting limit", () => {
  // An aggregation pipeline stage shaped as MCP servers for document stores declare one: 12 object levels.
  const nested = (levels: number): JsonSchema => (levels === 0 ? { type: "string" } : { type: "object", properties: { stage: nested(levels - 1) } });
  const deep: ToolDefinition = { type: "function", function: { name: "explain", parameters: nested(12) } };
  const shallow: ToolDefinition = { type: "function", function: { name: "find", parameters: nested(3) } };

  it("sends an over-deep tool with strict off for that tool alone, and says so in a notice", () => {
    const notices: string[] = [];
    const [explain, find] = sanitizeTools([deep, shallow], { onNotice: (text) => notices.push(text) });
    expect(explain?.function.strict).toBe(false);
    expect(find?.function.strict).toBe(true);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain("explain");
    expect(notices[0]).toContain("strict off");
  });

  it("keeps a schema of exactly 10 levels strict, with no notice", () => {
    const notices: string[] = [];
    const [tool] = sanitizeTools([{ type: "function", function: { name: "edge", parameters: nested(10) } }], { onNotice: (text) => notices.push(text) });
    expect(tool?.function.strict).toBe(true);
    expect(notices).toEqual([]);
  });
});

describe("sanitizeSchema", () => {
  it("makes every property required, the optional ones nullable", () => {
    const out = sanitizeSchema({
      type: "object",
      properties: { query: { type: "string" }, count: { type: "number" }, mode: { type: "string", enum: ["a", "b"] } },
      required: ["query"],
    }) as Record<string, any>;
    expect(out.required).toEqual(["query", "count", "mode"]);
    expect(out.properties.query).toEqual({ type: "string" });
    expect(out.properties.count).toEqual({ type: ["number", "null"] });
    expect(out.properties.mode).toEqual({ type: ["string", "null"], enum: ["a", "b", null] });
    expect(out.additionalProperties).toBe(false);
  });

  it("closes nested objects, array items and definitions with additionalProperties: false", () => {
    const out = sanitizeSchema({
      type: "object",
      properties: { list: { type: "array", items: { type: "object", properties: { a: { type: "string" } } } }, ref: { $ref: "#/$defs/Thing" } },
      $defs: { Thing: { type: "object", properties: { b: { type: "integer" } } } },
    });
    expect(strictModeViolations(out)).toEqual([]);
    expect((out as any).properties.list.type).toEqual(["array", "null"]);
    expect((out as any).$defs.Thing.additionalProperties).toBe(false);
  });

  it("moves keywords strict mode refuses into the description and keeps the ones it takes", () => {
    const out = sanitizeSchema({
      type: "object",
      properties: {
        url: { type: "string", format: "uri", minLength: 1, description: "Where to go" },
        when: { type: "string", format: "date-time", pattern: "^\\d{4}-" },
        size: { type: "integer", default: 10, exclusiveMinimum: 0, maximum: 100, multipleOf: 5 },
        tags: { type: "array", items: { type: "string" }, uniqueItems: true, minItems: 1 },
      },
      required: ["url", "when", "size", "tags"],
    }) as Record<string, any>;
    expect(out.properties.url).toEqual({ type: "string", description: "Where to go (format: uri; minLength: 1)" });
    expect(out.properties.when).toEqual({ type: "string", pattern: "^\\d{4}-", format: "date-time" });
    expect(out.properties.size).toEqual({ type: "integer", description: "(default: 10)", exclusiveMinimum: 0, maximum: 100, multipleOf: 5 });
    expect(out.properties.tags).toEqual({ type: "array", description: "(uniqueItems: true)", items: { type: "string" }, minItems: 1 });
  });

  it("keeps a recursive $ref as a reference into $defs instead of expanding it", () => {
    const tree = {
      type: "object",
      properties: { root: { $ref: "#/$defs/Node" } },
      required: ["root"],
      $defs: { Node: { type: "object", properties: { label: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/Node" } } } } },
    };
    const out = sanitizeSchema(tree) as Record<string, any>;
    expect(strictModeViolations(out)).toEqual([]);
    expect(out.properties.root).toEqual({ $ref: "#/$defs/Node" });
    expect(out.$defs.Node.properties.children).toEqual({
      type: ["array", "null"],
      items: { $ref: "#/$defs/Node" },
    });
  });

  it("turns recursion through the root into a definition", () => {
    const out = sanitizeSchema({ type: "object", properties: { name: { type: "string" }, parent: { $ref: "#" } } }) as Record<string, any>;
    expect(strictModeViolations(out)).toEqual([]);
    expect(out.properties.parent).toEqual({ anyOf: [{ $ref: "#/$defs/Root" }, { type: "null" }] });
    expect(out.$defs.Root.properties.parent).toEqual({ anyOf: [{ $ref: "#/$defs/Root" }, { type: "null" }] });
  });

  it("survives a definition that refers only to itself and a chain of aliases", () => {
    const out = sanitizeSchema({
      type: "object",
      properties: { a: { $ref: "#/$defs/A" }, b: { $ref: "#/$defs/B", description: "beside a ref" } },
      required: ["a", "b"],
      $defs: { A: { $ref: "#/$defs/A" }, B: { $ref: "#/$defs/C", title: "B" }, C: { $ref: "#/$defs/B", description: "C" } },
    });
    expect(strictModeViolations(out)).toEqual([]);
  });

  it("writes a $ref with sibling keywords out in place, since strict mode wants it alone", () => {
    const out = sanitizeSchema({
      type: "object",
      properties: { when: { $ref: "#/definitions/Stamp", description: "When it happened" } },
      required: ["when"],
      definitions: { Stamp: { type: "string", format: "date-time" } },
    }) as Record<string, any>;
    expect(out.properties.when).toEqual({ type: "string", description: "When it happened", format: "date-time" });
    expect(out.$defs).toBeUndefined();
  });

  it("folds allOf and turns oneOf into anyOf", () => {
    const out = sanitizeSchema({
      allOf: [
        { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
        { properties: { b: { oneOf: [{ type: "string" }, { type: "integer" }] } } },
      ],
    }) as Record<string, any>;
    expect(strictModeViolations(out)).toEqual([]);
    expect(Object.keys(out.properties)).toEqual(["a", "b"]);
    expect(out.properties.b).toEqual({ anyOf: [{ type: "string" }, { type: "integer" }, { type: "null" }] });
  });

  it("writes boolean, empty and typeless schemas as a union of the scalar types", () => {
    const any = { anyOf: [{ type: "string" }, { type: "number" }, { type: "boolean" }, { type: "null" }] };
    const out = sanitizeSchema({
      type: "object",
      properties: { t: true, e: {}, d: { description: "Anything" }, never: false },
      required: ["t", "e", "d", "never"],
    }) as Record<string, any>;
    expect(out.properties.t).toEqual(any);
    expect(out.properties.e).toEqual(any);
    expect(out.properties.d).toEqual({ description: "Anything", ...any });
    expect(out.properties).not.toHaveProperty("never");
    expect(out.required).toEqual(["t", "e", "d"]);
    expect(sanitizeSchema(false)).toBe(false);
  });

  it("splits a multi-type list into anyOf and keeps [T, null] as it is", () => {
    const out = sanitizeSchema({
      type: "object",
      properties: { id: { type: ["string", "integer"] }, note: { type: ["string", "null"] } },
      required: ["id", "note"],
    }) as Record<string, any>;
    expect(out.properties.id).toEqual({ anyOf: [{ type: "string" }, { type: "integer" }] });
    expect(out.properties.note).toEqual({ type: ["string", "null"] });
  });

  it("gives an array without items an item schema and a tuple a union of its members", () => {
    const out = sanitizeSchema({
      type: "object",
      properties: { bag: { type: "array" }, pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }] } },
      required: ["bag", "pair"],
    }) as Record<string, any>;
    expect(strictModeViolations(out)).toEqual([]);
    expect(out.properties.bag.items).toEqual({ anyOf: [{ type: "string" }, { type: "number" }, { type: "boolean" }, { type: "null" }] });
    expect(out.properties.pair.items).toEqual({ anyOf: [{ type: "string" }, { type: "number" }] });
  });

  it("closes a map and says in the description what it held", () => {
    const out = sanitizeSchema({
      type: "object",
      properties: { env: { type: "object", additionalProperties: { type: "string" }, description: "Variables" } },
      required: ["env"],
    }) as Record<string, any>;
    expect(out.properties.env).toEqual({
      type: "object",
      description: 'Variables (additionalProperties: {"type":"string"})',
      properties: {},
      required: [],
      additionalProperties: false,
    });
  });

  it("merges a root union of objects into one object", () => {
    const out = sanitizeSchema({
      anyOf: [
        { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
        { type: "object", properties: { path: { type: "string" }, url: { type: "string" } }, required: ["url"] },
      ],
    }) as Record<string, any>;
    expect(strictModeViolations(out)).toEqual([]);
    expect(out.properties.url).toEqual({ type: ["string", "null"] });
  });

  it("reads a zod v4 record and z.any() the way zod emits them", () => {
    const schema = z.toJSONSchema(z.object({ env: z.record(z.string(), z.string()), value: z.any().describe("Any value") })) as JsonSchema;
    const out = sanitizeSchema(schema);
    expect(strictModeViolations(out)).toEqual([]);
    expect(bytes(out)).not.toContain("propertyNames");
  });

  it("leaves a non-object root as a schema and never throws on garbage", () => {
    expect(sanitizeSchema({ type: "string", maxLength: 5 })).toEqual({ type: "string", description: "(maxLength: 5)" });
    const cyclic: Record<string, unknown> = { type: "object" };
    cyclic.properties = { self: cyclic };
    const hostile = {
      type: "object",
      get properties(): never {
        throw new Error("no");
      },
    };
    for (const input of [
      null,
      undefined,
      42,
      "x",
      [],
      [1, 2],
      { type: 7 },
      { properties: 5 },
      { $ref: 5 },
      { $ref: "http://x/y" },
      cyclic,
      hostile,
      { type: "object", properties: { f: () => 1, n: Number.NaN } },
    ]) {
      expect(() => sanitizeSchema(input as never)).not.toThrow();
      expect(() => relaxSchema(input as never)).not.toThrow();
      expect(() => sanitizeTools([{ type: "function", function: { name: "x", parameters: input as never } }])).not.toThrow();
    }
  });

  it("never mutates its input, frozen or not", () => {
    const input = deepFreeze({
      type: "object",
      properties: { a: { $ref: "#/$defs/A", description: "d" }, b: { allOf: [{ type: "string" }] } },
      $defs: { A: { type: "object", properties: { x: { type: "string" } } } },
    });
    const before = bytes(input);
    sanitizeSchema(input);
    relaxSchema(input);
    relaxTools(sanitizeTools([{ type: "function", function: { name: "t", parameters: input } }]));
    expect(bytes(input)).toBe(before);
  });
});

describe("sanitizeTools", () => {
  it("marks each function strict and keeps only name, description, parameters and strict", () => {
    const [tool] = sanitizeTools([
      { type: "function", function: { name: "t", description: "d", parameters: { type: "object", properties: {} }, extra: 1 } as never },
    ]);
    expect(tool).toEqual({
      type: "function",
      function: { name: "t", description: "d", parameters: { type: "object", properties: {}, required: [], additionalProperties: false }, strict: true },
    });
    expect(Object.keys(tool as object)).toEqual(["type", "function"]);
  });

  it("gives a tool with no or a non-object schema an object with no properties", () => {
    const empty = { type: "object", properties: {}, required: [], additionalProperties: false };
    const tools = sanitizeTools([
      { type: "function", function: { name: "a" } },
      { type: "function", function: { name: "b", parameters: { type: "string" } } },
      { type: "function", function: { name: "c", parameters: true } },
    ]);
    expect(tools.map((tool) => tool.function.parameters)).toEqual([empty, empty, empty]);
  });

  it("turns strict off for a schema past the documented size limits", () => {
    const properties: Record<string, JsonSchema> = {};
    for (let index = 0; index < 5001; index++) properties[`p${index}`] = { type: "string" };
    const [tool] = sanitizeTools([{ type: "function", function: { name: "big", parameters: { type: "object", properties } } }]);
    expect(tool?.function.strict).toBe(false);
  });

  it("passes through entries that are not function tools and answers [] for a non-array", () => {
    const odd = [null, { type: "function" }, { type: "function", function: { name: 3 } }] as unknown as ToolDefinition[];
    expect(sanitizeTools(odd)).toEqual(odd);
    expect(sanitizeTools(undefined as never)).toEqual([]);
    expect(relaxTools("x" as never)).toEqual([]);
  });
});

describe("relaxTools", () => {
  it("relaxes the schema a sanitized tool was made from, so optional stays optional", () => {
    const original: ToolDefinition = {
      type: "function",
      function: {
        name: "log",
        parameters: { type: "object", properties: { repo: { type: "string" }, limit: { type: "integer", default: 10 } }, required: ["repo"] },
      },
    };
    const [relaxed] = relaxTools(sanitizeTools([original]));
    expect(relaxed).toEqual({
      type: "function",
      function: {
        name: "log",
        parameters: { type: "object", properties: { repo: { type: "string" }, limit: { type: "integer", default: 10 } }, required: ["repo"] },
      },
    });
    expect(JSON.stringify(sanitizeTools([original]))).not.toContain("original");
  });

  it("relaxes the schema a sanitized response format was made from", () => {
    const format: JsonSchema = {
      type: "object",
      properties: { tools: { type: "array", items: { type: "string" } }, why: { type: "string" } },
      required: ["tools"],
    };
    expect(relaxSchema(sanitizeSchema(format))).toEqual(relaxSchema(format));
    expect(JSON.stringify(relaxSchema(sanitizeSchema(format)))).not.toContain("null");
  });

  it("drops strict and relaxes plain tool definitions too", () => {
    const [relaxed] = relaxTools([
      { type: "function", function: { name: "x", parameters: { type: "object", properties: { a: { description: "any" } } }, strict: true } },
    ]);
    expect(relaxed?.function).toEqual({
      name: "x",
      parameters: { type: "object", properties: { a: { type: ["string", "number", "boolean", "object", "array", "null"], description: "any" } } },
    });
  });
});

describe("relaxSchema", () => {
  const anyTypes = ["string", "number", "boolean", "object", "array", "null"];

  it("gives a property with a description but no type every type (z.any(), pydantic Any)", () => {
    const out = relaxSchema({ type: "object", properties: { value: { description: "Any value", title: "Value" } } }) as Record<string, any>;
    expect(out.properties.value).toEqual({ type: anyTypes, title: "Value", description: "Any value" });
    expect(grammarRefusals(out)).toEqual([]);
  });

  it("moves patterns llama.cpp cannot compile into the description and keeps the ones it can", () => {
    const out = relaxSchema({
      type: "object",
      properties: {
        look: { type: "string", pattern: "^(?!admin).*$" },
        digits: { type: "string", pattern: "^\\d{4}$" },
        loose: { type: "string", pattern: "[a-z]+" },
        ok: { type: "string", pattern: "^[a-z0-9_-]{1,64}$" },
        huge: { type: "string", pattern: "^a{1,5000}$" },
        nested: { type: "string", pattern: "^(a{50}){50}$" },
      },
    }) as Record<string, any>;
    expect(out.properties.look).toEqual({ type: "string", description: '(pattern: "^(?!admin).*$")' });
    expect(out.properties.digits.pattern).toBeUndefined();
    expect(out.properties.loose.pattern).toBeUndefined();
    expect(out.properties.ok.pattern).toBe("^[a-z0-9_-]{1,64}$");
    expect(out.properties.huge.pattern).toBeUndefined();
    expect(out.properties.nested.pattern).toBeUndefined();
    expect(grammarRefusals(out)).toEqual([]);
  });

  it("moves repetition bounds of 2,000 or more out and keeps smaller ones", () => {
    const out = relaxSchema({
      type: "object",
      properties: {
        body: { type: "string", maxLength: 4000 },
        title: { type: "string", maxLength: 1999, minLength: 1 },
        list: { type: "array", items: { type: "string" }, maxItems: 2000 },
      },
    }) as Record<string, any>;
    expect(out.properties.body).toEqual({ type: "string", description: "(maxLength: 4000)" });
    expect(out.properties.title).toEqual({ type: "string", minLength: 1, maxLength: 1999 });
    expect(out.properties.list).toEqual({ type: "array", description: "(maxItems: 2000)", items: { type: "string" } });
  });

  it("drops propertyNames from a zod v4 record but keeps the map", () => {
    const schema = z.toJSONSchema(z.object({ env: z.record(z.string(), z.string()) })) as JsonSchema;
    expect(JSON.stringify(schema)).toContain("propertyNames");
    const out = relaxSchema(schema) as Record<string, any>;
    expect(out.properties.env).toEqual({ type: "object", additionalProperties: { type: "string" } });
    expect(grammarRefusals(out)).toEqual([]);
  });

  it("removes what xgrammar refuses and what llama.cpp reads with the wrong type", () => {
    const out = relaxSchema({
      type: "object",
      properties: {
        n: { type: "number", multipleOf: 0.5, minimum: 0, exclusiveMinimum: true },
        s: { type: "string", format: "custom", maxLength: 10 },
        f: { type: "string", format: 7 },
        u: { type: "array", items: { type: "string" }, uniqueItems: true },
        r: { $ref: "https://example.com/schema.json" },
      },
    }) as Record<string, any>;
    expect(out.properties.n).toEqual({ type: "number", description: "(multipleOf: 0.5)", exclusiveMinimum: 0 });
    expect(out.properties.s).toEqual({ type: "string", description: "(format: custom)", maxLength: 10 });
    expect(out.properties.f).toEqual({ type: "string" });
    expect(out.properties.u).toEqual({ type: "array", description: "(uniqueItems: true)", items: { type: "string" } });
    expect(out.properties.r).toEqual({ type: anyTypes });
    expect(grammarRefusals(out)).toEqual([]);
  });

  it("points recursion through the root and nested definitions at a root $defs", () => {
    const out = relaxSchema({
      type: "object",
      properties: { parent: { $ref: "#" }, item: { $ref: "#/properties/inner/$defs/Item" }, inner: { type: "object", $defs: { Item: { type: "string" } } } },
    }) as Record<string, any>;
    expect(out.properties.parent).toEqual({ $ref: "#/$defs/Root" });
    expect(out.$defs.Root.type).toBe("object");
    expect(grammarRefusals(out)).toEqual([]);
  });
});

describe("isGrammarError", () => {
  const wordings = [
    // llama.cpp common/json-schema-to-grammar.cpp, check_errors() and visit()
    'JSON schema conversion failed:\nUnrecognized schema: {"description":"Any value"}',
    "JSON schema conversion failed:\nPattern must start with '^' and end with '$'",
    // llama.cpp server when the sampler's grammar does not parse
    "Failed to parse grammar",
    // llama-server of July 2026 (test/fixtures/llama.cpp/grammar-refusals.json)
    "Failed to initialize samplers: failed to parse grammar",
    "Unable to generate parser for this template. Automatic parser generation failed: JSON schema conversion failed:\nPattern must start with '^' and end with '$'",
    // llama.cpp src/llama-grammar.cpp, relayed by Ollama
    "parse: error parsing grammar: number of repetitions exceeds sane defaults, please reduce the number of repetitions",
    // vLLM backend_xgrammar.py
    "The provided JSON schema contains features not supported by xgrammar.",
    "Failed to transform json schema into a grammar: unsupported keyword",
    // vLLM guidance backend (llguidance)
    'Grammar error: Unimplemented keys: ["propertyNames"]',
  ];

  it.each(wordings)("recognises %s", (message) => {
    expect(isGrammarError(message)).toBe(true);
    expect(isGrammarError(new Error(message))).toBe(true);
    expect(isGrammarError({ error: { message, type: "invalid_request_error" } })).toBe(true);
    expect(isGrammarError({ error: message })).toBe(true);
    expect(isGrammarError(APIError.generate(400, { error: { message, code: 400 } }, undefined, new Headers()))).toBe(true);
    expect(isGrammarError(new Error("request failed", { cause: new Error(message) }))).toBe(true);
  });

  it("does not take other refusals for grammar errors", () => {
    for (const other of [
      // llama-server under --reasoning-format none with a thinking template: the sampler, not the schema
      "Failed to initialize samplers: std::exception",
      "Invalid schema for function 'x': In context=('properties', 'count'), 'default' is not permitted.",
      "the request exceeds the available context size, try increasing it",
      "Rate limit reached",
      "",
      undefined,
      null,
      42,
      {},
    ]) {
      expect(isGrammarError(other)).toBe(false);
    }
  });

  it("never throws, even on a hostile value", () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("no");
        },
        has() {
          throw new Error("no");
        },
      },
    );
    expect(isGrammarError(hostile)).toBe(false);
  });
});

const keywordNames = [
  "type",
  "properties",
  "items",
  "required",
  "anyOf",
  "oneOf",
  "allOf",
  "$ref",
  "$defs",
  "additionalProperties",
  "enum",
  "const",
  "pattern",
  "format",
  "default",
  "description",
  "minLength",
  "maxLength",
  "nullable",
  "prefixItems",
  "not",
];

const schemaArbitrary = fc.letrec<{ schema: unknown }>((tie) => ({
  schema: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.boolean(),
    fc.jsonValue({ maxDepth: 2 }),
    fc.record(
      {
        type: fc.oneof(
          fc.constantFrom("object", "string", "number", "integer", "boolean", "array", "null", "any"),
          fc.subarray(["string", "null", "object", "integer", "array"]),
        ),
        properties: fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("__proto__", "type", "$ref")), tie("schema"), { maxKeys: 4 }),
        required: fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
        items: tie("schema"),
        anyOf: fc.array(tie("schema"), { maxLength: 3 }),
        oneOf: fc.array(tie("schema"), { maxLength: 3 }),
        allOf: fc.array(tie("schema"), { maxLength: 2 }),
        $ref: fc.constantFrom("#", "#/$defs/A", "#/$defs/B", "#/definitions/A", "#/properties/x", "#/nope", "https://x/y", "A"),
        $defs: fc.record({ A: tie("schema"), B: tie("schema") }, { requiredKeys: [] }),
        additionalProperties: fc.oneof(fc.boolean(), tie("schema")),
        enum: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 4 }),
        const: fc.jsonValue({ maxDepth: 1 }),
        pattern: fc.oneof(fc.constantFrom("^a+$", "(?=x)", "^\\d$", "[", ""), fc.string({ maxLength: 8 })),
        format: fc.oneof(fc.constantFrom("date-time", "uri", "uuid"), fc.integer()),
        default: fc.jsonValue({ maxDepth: 1 }),
        description: fc.string({ maxLength: 10 }),
        minLength: fc.oneof(fc.nat(5000), fc.double()),
        maxLength: fc.oneof(fc.nat(5000), fc.double()),
        nullable: fc.boolean(),
        prefixItems: fc.array(tie("schema"), { maxLength: 2 }),
        not: tie("schema"),
      },
      { requiredKeys: [] },
    ),
  ),
})).schema;

describe("schema-compat properties", () => {
  it("sanitizes any generated schema without throwing, idempotently, into a strict schema when it is an object", () => {
    fc.assert(
      fc.property(schemaArbitrary, (input) => {
        const once = sanitizeSchema(input as JsonSchema);
        expect(bytes(sanitizeSchema(once))).toBe(bytes(once));
        expect(bytes(sanitizeSchema(input as JsonSchema))).toBe(bytes(once));
        if (typeof once === "object" && once !== null && (once as Record<string, unknown>).type === "object") {
          expect(strictModeViolations(once)).toEqual([]);
        }
        const [tool] = sanitizeTools([{ type: "function", function: { name: "t", parameters: input as JsonSchema } }]);
        expect(strictModeViolations(tool?.function.parameters)).toEqual([]);
        expect(bytes(sanitizeTools(sanitizeTools([tool as ToolDefinition])))).toBe(bytes([tool]));
      }),
      { numRuns: 250 },
    );
  });

  it("relaxes any generated schema without throwing into one no grammar server refuses", () => {
    fc.assert(
      fc.property(schemaArbitrary, (input) => {
        const relaxed = relaxSchema(input as JsonSchema);
        if (relaxed !== false) expect(grammarRefusals(relaxed)).toEqual([]);
        expect(bytes(relaxSchema(input as JsonSchema))).toBe(bytes(relaxed));
        const [tool] = relaxTools(sanitizeTools([{ type: "function", function: { name: "t", parameters: input as JsonSchema } }]));
        expect(grammarRefusals(tool?.function.parameters)).toEqual([]);
      }),
      { numRuns: 250 },
    );
  });

  it("never throws on arbitrary JSON or keyword soup", () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.dictionary(fc.constantFrom(...keywordNames), fc.jsonValue({ maxDepth: 3 }))), (input) => {
        expect(() => sanitizeSchema(input as JsonSchema)).not.toThrow();
        expect(() => relaxSchema(input as JsonSchema)).not.toThrow();
        expect(() => isGrammarError(input)).not.toThrow();
      }),
      { numRuns: 200 },
    );
  });
});

describe("omitOptionalNulls", () => {
  const schema = {
    type: "object",
    properties: {
      query: { type: "string" },
      limit: { type: "integer" },
      cursor: { type: ["string", "null"] },
      anything: {},
      filter: { type: "object", properties: { tag: { type: "string" }, owner: { anyOf: [{ type: "string" }, { type: "null" }] } } },
      mode: { enum: ["a", null] },
    },
    required: ["query"],
  };

  it("drops a null the original schema does not take for an optional property", () => {
    expect(omitOptionalNulls({ query: "x", limit: null }, schema)).toEqual({ query: "x" });
  });

  it("keeps a null the property takes, a required one, an untyped one and an unknown key", () => {
    const args = { query: null, cursor: null, anything: null, mode: null, extra: null };
    expect(omitOptionalNulls(args, schema)).toEqual(args);
  });

  it("cleans nested objects against their own properties", () => {
    expect(omitOptionalNulls({ query: "x", filter: { tag: null, owner: null } }, schema)).toEqual({ query: "x", filter: { owner: null } });
  });

  it("hands back the same object when nothing changes, and never changes its input", () => {
    const args = { query: "x", limit: 3 };
    expect(omitOptionalNulls(args, schema)).toBe(args);
    const nulls = { query: "x", limit: null };
    omitOptionalNulls(nulls, schema);
    expect(nulls).toEqual({ query: "x", limit: null });
  });

  it("leaves arguments alone without a schema to read", () => {
    const args = { a: null };
    expect(omitOptionalNulls(args, undefined)).toBe(args);
    expect(omitOptionalNulls(args, true)).toBe(args);
  });
});
