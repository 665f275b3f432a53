import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { JsonSchema, ToolDefinition } from "../../src/shapes/config.js";
import {
  MAX_ARGUMENT_ISSUES,
  argumentsChecked,
  compileSchemaIn,
  createArgumentChecker,
  declaredParameters,
  invalidArgumentsText,
  markArgumentsChecked,
} from "../../src/run/argument-validation.js";
import { relaxTools, sanitizeTools } from "../../src/text/schema-compat.js";
import { clearState, createState } from "../../src/state/state.js";

const toolOf = (name: string, parameters: JsonSchema): ToolDefinition => ({ type: "function", function: { name, parameters } });

function checkWith(parameters: JsonSchema, args: Record<string, unknown>): string[] | undefined {
  const state = createState();
  try {
    return createArgumentChecker(state, () => undefined).check({ id: "1", name: "t", args, raw: "" }, toolOf("t", parameters));
  } finally {
    clearState(state);
  }
}

describe("the argument checker", () => {
  it("names each issue by its path, nested objects and arrays included, in a form the model can act on", () => {
    const schema: JsonSchema = {
      type: "object",
      properties: {
        items: { type: "array", items: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
        mode: { enum: ["fast", "slow"] },
        kind: { const: "note" },
        size: { type: "integer", minimum: 1 },
      },
      additionalProperties: false,
    };
    expect(checkWith(schema, { items: [{ name: 1 }, {}], mode: "medium", kind: "memo", size: 0, extra: true })).toEqual([
      "extra: is not a parameter here",
      "items[0].name: must be string",
      "items[1].name: is required",
      'mode: must be one of "fast", "slow"',
      'kind: must be "note"',
      "size: must be >= 1",
    ]);
    expect(checkWith(schema, { items: [{ name: "a" }], mode: "fast", kind: "note", size: 3 })).toBeUndefined();
  });

  it("lists at most MAX_ARGUMENT_ISSUES issues and counts the rest", () => {
    const properties = Object.fromEntries(Array.from({ length: 15 }, (_, index) => [`p${index}`, { type: "string" }]));
    const required = Object.keys(properties);
    const issues = checkWith({ type: "object", properties, required }, {})!;
    expect(issues).toHaveLength(MAX_ARGUMENT_ISSUES + 1);
    expect(issues.at(-1)).toBe("and 5 more");
    expect(invalidArgumentsText("t", ["a: is required"])).toBe(
      "The arguments for t do not match its parameters, so it was not run:\n- a: is required\nCall it again with arguments that match its parameters.",
    );
  });

  it("checks nothing for a tool with no schema, an empty one, or true", () => {
    expect(checkWith(undefined as never, { a: 1 })).toBeUndefined();
    expect(checkWith({}, { a: 1 })).toBeUndefined();
    expect(checkWith(true, { a: 1 })).toBeUndefined();
    expect(checkWith(false, { a: 1 })).toEqual(["(the arguments): boolean schema is false"]);
  });

  it("reads a root $schema naming draft-07 as 2020-12 rather than failing to load it", () => {
    expect(checkWith({ $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { a: { type: "number" } } }, { a: "x" })).toEqual([
      "a: must be number",
    ]);
  });

  it("compiles a schema once per runtime, whichever object carries it, and afresh in another runtime", () => {
    const first = createState();
    const second = createState();
    const schema = (): JsonSchema => ({ type: "object", properties: { a: { type: "string" } } });
    const entry = compileSchemaIn(first, schema());
    expect(compileSchemaIn(first, schema())).toBe(entry);
    expect(compileSchemaIn(second, schema())).not.toBe(entry);
    clearState(first);
    clearState(second);
  });

  it("checks a sanitized or relaxed tool against the parameters it was made from", () => {
    const original = toolOf("t", { type: "object", properties: { a: { type: "string", minLength: 2 } } });
    const [strict] = sanitizeTools([original]);
    const [relaxed] = relaxTools(sanitizeTools([original]));
    expect(declaredParameters(strict)).toEqual(original.function.parameters);
    expect(declaredParameters(relaxed)).toEqual(original.function.parameters);
    expect(declaredParameters(original)).toBe(original.function.parameters);
  });

  it("leaves a marked tool alone, marking a frozen one through a copy that keeps what it carried", () => {
    const tool = toolOf("t", { type: "object" });
    expect(argumentsChecked(tool)).toBe(false);
    expect(markArgumentsChecked(tool)).toBe(tool);
    expect(argumentsChecked(tool)).toBe(true);
    expect(JSON.stringify(tool)).toBe('{"type":"function","function":{"name":"t","parameters":{"type":"object"}}}');
    const frozen = Object.freeze(sanitizeTools([toolOf("f", { type: "object", properties: { a: { type: "string" } } })])[0]!);
    const marked = markArgumentsChecked(frozen);
    expect(marked).not.toBe(frozen);
    expect(argumentsChecked(marked)).toBe(true);
    expect(declaredParameters(marked)).toEqual({ type: "object", properties: { a: { type: "string" } } });
    const state = createState();
    expect(createArgumentChecker(state, () => undefined).check({ id: "1", name: "f", args: { a: 1 }, raw: "" }, marked)).toBeUndefined();
    clearState(state);
  });
});

interface FixtureFile {
  server: string;
  tools: Array<{ name: string; inputSchema: JsonSchema }>;
}

describe("the argument checker over real MCP schemas", () => {
  const dir = fileURLToPath(new URL("../fixtures/mcp-schemas/", import.meta.url));
  const tools = readdirSync(dir)
    .filter((file) => file.endsWith(".json"))
    .sort()
    .flatMap((file) => (JSON.parse(readFileSync(dir + file, "utf8")) as FixtureFile).tools.map((tool) => toolOf(tool.name, tool.inputSchema)));

  it("compiles every one of them, and never throws whatever arguments it is handed", () => {
    const state = createState();
    const notices: string[] = [];
    const checker = createArgumentChecker(state, (text) => notices.push(text));
    fc.assert(
      fc.property(fc.constantFrom(...tools), fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue()), (tool, args) => {
        const issues = checker.check({ id: "1", name: tool.function.name, args, raw: "" }, tool);
        if (issues !== undefined) {
          expect(issues.length).toBeGreaterThan(0);
          expect(issues.length).toBeLessThanOrEqual(MAX_ARGUMENT_ISSUES + 1);
        }
      }),
      { numRuns: 300 },
    );
    expect(notices).toEqual([]);
    clearState(state);
  });
});
