import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { cleanName, createToolNames } from "../../src/mcp/names.js";
import { TOOL_NAME_PATTERN } from "../../src/index.js";

describe("the names MCP tools are offered under", () => {
  it("keeps a valid, free name as the server wrote it", () => {
    const names = createToolNames(false, () => undefined);
    expect(names.nameFor("files", "read_file")).toBe("read_file");
    expect(names.nameFor("files", "read_file")).toBe("read_file");
  });

  it("cleans a name an OpenAI-compatible server would refuse, and says so", () => {
    const told: string[] = [];
    const names = createToolNames(false, (server, tool, name) => told.push(`${server}:${tool}→${name}`));
    expect(names.nameFor("web", "search.pages v2")).toBe("search_pages_v2");
    expect(names.nameFor("web", "é")).toBe("tool");
    expect(told).toEqual(["web:search.pages v2→search_pages_v2", "web:é→tool"]);
  });

  it("gives a taken name the server's name in front, then a number", () => {
    const names = createToolNames(false, () => undefined);
    expect(names.nameFor("a", "search")).toBe("search");
    expect(names.nameFor("b", "search")).toBe("b_search");
    expect(names.nameFor("c", "b_search")).toBe("c_b_search");
    expect(names.nameFor("b", "search")).toBe("b_search");
  });

  it("numbers a rewrite that is itself taken, within 64 characters", () => {
    const names = createToolNames(false, () => undefined);
    const long = "x".repeat(70);
    const first = names.nameFor("s", long);
    const second = names.nameFor("s", `${long}!`);
    expect(first).toBe("x".repeat(64));
    expect(second).toBe(`s_${"x".repeat(62)}`.slice(0, 64));
    const third = names.nameFor("s", `${long}?`);
    expect(third).toMatch(/_2$/);
    expect(third).toHaveLength(64);
  });

  it("frees a name its tool no longer holds", () => {
    const names = createToolNames(false, () => undefined);
    names.nameFor("a", "search");
    names.release("a", "search");
    expect(names.nameFor("b", "search")).toBe("search");
  });

  it("hands out only valid, distinct names whatever the servers call their tools", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom("a", "b", "ünï"), fc.string({ maxLength: 80 })), { maxLength: 30 }), fc.boolean(), (tools, prefix) => {
        const names = createToolNames(prefix, () => undefined);
        const given = new Map<string, string>();
        for (const [server, tool] of tools) given.set(`${server}\u0000${tool}`, names.nameFor(server, tool));
        const values = [...given.values()];
        expect(new Set(values).size).toBe(values.length);
        for (const name of values) expect(name).toMatch(TOOL_NAME_PATTERN);
      }),
    );
    expect(cleanName("")).toBe("tool");
  });
});
