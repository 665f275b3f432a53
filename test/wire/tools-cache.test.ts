import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { ToolDefinition } from "../../src/shapes/config.js";
import { clearState, createState, slotNames } from "../../src/state/state.js";
import { relaxTools, sanitizeTools } from "../../src/text/schema-compat.js";
import { declareToolsIn, toolsJsonCharsIn } from "../../src/wire/tools-cache.js";
import { buildBodyIn } from "../../src/wire/request-body.js";
import { freshEndpointCapabilities } from "../../src/wire/capabilities.js";
import "../support/fast-check-seed.js";

const tool = (name: string, properties: Record<string, unknown> = { path: { type: "string" } }, description = `Does ${name}.`): ToolDefinition => ({
  type: "function",
  function: { name, description, parameters: { type: "object", properties, required: Object.keys(properties).slice(0, 1) } },
});

const deep = (levels: number): Record<string, unknown> => (levels === 0 ? { type: "string" } : { type: "object", properties: { stage: deep(levels - 1) } });

const json = (value: unknown): string => JSON.stringify(value);

describe("declareToolsIn", () => {
  it("declares what sanitizeTools and relaxTools make, strict and relaxed", () => {
    const state = createState();
    const tools = [
      tool("read"),
      tool("write", { text: { type: "string" }, at: { type: "integer", default: 0 } }),
      { type: "other" } as unknown as ToolDefinition,
    ];
    expect(json(declareToolsIn(state, tools, true).tools)).toBe(json(sanitizeTools(tools)));
    expect(json(declareToolsIn(state, tools, false).tools)).toBe(json(relaxTools(sanitizeTools(tools))));
    // Asked again, from the cache: still the same.
    expect(json(declareToolsIn(state, tools, true).tools)).toBe(json(sanitizeTools(tools)));
    expect(json(declareToolsIn(state, tools, false).tools)).toBe(json(relaxTools(sanitizeTools(tools))));
  });

  it("rewrites a definition once and hands the same rewrite to every later request, in a fresh array", () => {
    const state = createState();
    const tools = [tool("read"), tool("write")];
    const first = declareToolsIn(state, tools, true);
    const second = declareToolsIn(state, [...tools].reverse(), true);
    expect(second.tools).not.toBe(first.tools);
    expect(second.tools[0]).toBe(first.tools[1]);
    expect(second.tools[1]).toBe(first.tools[0]);
    expect(declareToolsIn(state, tools, false).tools[0]).toBe(declareToolsIn(state, tools, false).tools[0]);
  });

  it("sees a tool pushed onto the same array at once", () => {
    const state = createState();
    const tools = [tool("read")];
    expect(declareToolsIn(state, tools, true).tools.map((entry) => entry.function.name)).toEqual(["read"]);
    tools.push(tool("write"));
    const after = declareToolsIn(state, tools, true).tools;
    expect(after.map((entry) => entry.function.name)).toEqual(["read", "write"]);
    expect(json(after)).toBe(json(sanitizeTools(tools)));
    tools.splice(0, 1);
    expect(declareToolsIn(state, tools, true).tools.map((entry) => entry.function.name)).toEqual(["write"]);
  });

  it("rewrites a definition again once its parameters object, description, name or function is replaced", () => {
    const state = createState();
    const read = tool("read");
    const before = declareToolsIn(state, [read], true).tools[0]!;
    read.function.parameters = { type: "object", properties: { path: { type: "string" }, lines: { type: "integer" } } };
    const widened = declareToolsIn(state, [read], true).tools[0]!;
    expect(widened).not.toBe(before);
    expect(json(widened)).toBe(json(sanitizeTools([read])[0]));
    expect(Object.keys((widened.function.parameters as { properties: object }).properties)).toEqual(["path", "lines"]);
    read.function.description = "Reads part of a file.";
    expect(declareToolsIn(state, [read], true).tools[0]!.function.description).toBe("Reads part of a file.");
    read.function.name = "read_part";
    expect(declareToolsIn(state, [read], true).tools[0]!.function.name).toBe("read_part");
    read.function = { ...read.function, name: "peek" };
    expect(declareToolsIn(state, [read], false).tools[0]!.function.name).toBe("peek");
    expect(json(declareToolsIn(state, [read], false).tools)).toBe(json(relaxTools(sanitizeTools([read]))));
  });

  it("tells a tool past strict mode's limits on every strict request, and on none relaxed", () => {
    const state = createState();
    const tools = [tool("explain", { stage: deep(12) }), tool("find")];
    const expected: string[] = [];
    sanitizeTools(tools, { onNotice: (text) => expected.push(text) });
    for (let round = 0; round < 3; round++) {
      const { tools: declared, strictOff } = declareToolsIn(state, tools, true);
      expect(strictOff).toEqual([[expected[0], "explain"]]);
      expect(declared.map((entry) => entry.function.strict)).toEqual([false, true]);
    }
    expect(declareToolsIn(state, tools, false).strictOff).toEqual([]);
  });

  it("keeps nothing of a definition it hands back unchanged, and nothing past a state's clear", () => {
    const state = createState();
    const other = { type: "web_search" } as unknown as ToolDefinition;
    const declared = declareToolsIn(state, [other, tool("read")], true).tools;
    expect(declared[0]).toBe(other);
    expect(slotNames(state)).toContain("tools.declared");
    clearState(state);
    expect(slotNames(state)).not.toContain("tools.declared");
    expect(declareToolsIn(state, [tool("read")], true).tools[0]).not.toBe(declared[1]);
  });

  it("keeps one runtime's rewrites out of another's", () => {
    const read = tool("read");
    const a = declareToolsIn(createState(), [read], true).tools[0];
    const b = declareToolsIn(createState(), [read], true).tools[0];
    expect(a).not.toBe(b);
    expect(json(a)).toBe(json(b));
  });
});

describe("toolsJsonCharsIn", () => {
  it("counts what JSON.stringify writes, for declared arrays in any order and for arrays holding other objects", () => {
    const state = createState();
    const pool = [tool("read"), tool("write", { text: { type: "string" } }, "Writé ✓ a file."), tool("explain", { stage: deep(12) }), tool("list", {})];
    const declaredStrict = declareToolsIn(state, pool, true).tools;
    const declaredRelaxed = declareToolsIn(state, pool, false).tools;
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 11 }), { maxLength: 12 }), (picks) => {
        const tools = picks.map((pick) => (pick < 4 ? declaredStrict[pick]! : pick < 8 ? declaredRelaxed[pick - 4]! : pool[pick - 8]!));
        expect(toolsJsonCharsIn(state, tools)).toBe(JSON.stringify(tools).length);
      }),
      { numRuns: 200 },
    );
  });

  it("sees a host's definition changed in place, since only the library's own are counted from memory", () => {
    const state = createState();
    const read = tool("read");
    const before = toolsJsonCharsIn(state, [read]);
    read.function.description = "Reads a file, all of it, and says how long it is.";
    expect(toolsJsonCharsIn(state, [read])).toBe(JSON.stringify([read]).length);
    expect(toolsJsonCharsIn(state, [read])).toBeGreaterThan(before);
  });

  it("counts an array JSON cannot write as nothing", () => {
    const cyclic: Record<string, unknown> = { type: "function" };
    cyclic.self = cyclic;
    expect(toolsJsonCharsIn(createState(), [cyclic as unknown as ToolDefinition])).toBe(0);
  });
});

describe("buildBodyIn", () => {
  it("declares the tools a host pushed onto the same array between two bodies", () => {
    const state = createState();
    const tools = [tool("read")];
    const messages = [{ role: "user" as const, content: "hi" }];
    const first = buildBodyIn(state, { model: "m" }, freshEndpointCapabilities(), undefined, messages, tools);
    tools.push(tool("append"));
    const second = buildBodyIn(state, { model: "m" }, freshEndpointCapabilities(), undefined, messages, tools);
    expect(first.tools?.map((entry) => entry.function.name)).toEqual(["read"]);
    expect(second.tools?.map((entry) => entry.function.name)).toEqual(["append", "read"]);
    expect(second.tools?.[1]).toBe(first.tools?.[0]);
  });
});
