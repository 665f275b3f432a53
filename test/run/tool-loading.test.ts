import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { CatalogServer } from "../../src/shapes/catalog.js";
import type { ToolDefinition } from "../../src/shapes/config.js";
import {
  CALL_TOOL,
  LOAD_TOOLS,
  PROXY_TOOLS,
  carryOver,
  catalogFromTools,
  catalogNames,
  definedTools,
  describeCatalog,
  expandNames,
  formatDefinitionLine,
  holdsDefinitions,
  loadResult,
  proxiedCall,
  proxyLoadResult,
} from "../../src/run/tool-loading.js";

const catalog: CatalogServer[] = [
  {
    name: "files",
    label: "Local files",
    tools: [
      { name: "write_file", description: "Write a file" },
      { name: "read_file", description: "Read a file\nmore" },
    ],
  },
  { name: "web", tools: [{ name: "fetch", description: "Fetch a page" }] },
];

const tool = (name: string): ToolDefinition => ({
  type: "function",
  function: { name, description: `Does ${name}`, parameters: { type: "object", properties: { path: { type: "string" } } } },
});

describe("PROXY_TOOLS", () => {
  it("declares call_tool and load_tools, in name order, and nothing else", () => {
    expect(PROXY_TOOLS.map((entry) => entry.function.name)).toEqual(["call_tool", "load_tools"]);
    expect(PROXY_TOOLS).toContain(CALL_TOOL);
    expect(PROXY_TOOLS).toContain(LOAD_TOOLS);
  });

  it("cannot be changed by a caller", () => {
    expect(Object.isFrozen(PROXY_TOOLS)).toBe(true);
    expect(Object.isFrozen(LOAD_TOOLS.function)).toBe(true);
  });
});

describe("describeCatalog", () => {
  it("lists servers and tools in name order, one line each, with no schema", () => {
    const text = describeCatalog(catalog);
    expect(text).toContain("files (Local files)\n- read_file: Read a file\n- write_file: Write a file");
    expect(text.indexOf("files (")).toBeLessThan(text.indexOf("web"));
    expect(text).not.toContain("more");
    expect(text).not.toContain("properties");
  });

  it("is the same text whatever order the servers connected in", () => {
    expect(describeCatalog([...catalog].reverse())).toBe(describeCatalog(catalog));
  });

  it("is empty for no catalogue, and never throws on junk", () => {
    expect(describeCatalog([])).toBe("");
    fc.assert(
      fc.property(fc.anything(), (junk) => typeof describeCatalog(junk as CatalogServer[]) === "string"),
      { numRuns: 100 },
    );
  });
});

describe("expandNames", () => {
  it("resolves tool names and expands a server's name to its tools", () => {
    expect(expandNames({ names: ["fetch", "files"] }, catalog).names).toEqual(["fetch", "write_file", "read_file"]);
  });

  it("reads a bare array, a comma-separated string and qualified names", () => {
    expect(expandNames(["fetch"], catalog).names).toEqual(["fetch"]);
    expect(expandNames({ names: "fetch, read_file" }, catalog).names).toEqual(["fetch", "read_file"]);
    expect(expandNames({ names: ["files.read_file", "web__fetch", "READ_FILE"] }, catalog).names).toEqual(["read_file", "fetch"]);
  });

  it("lists unknown names and holds the load to its cap, carrying the cap", () => {
    const resolution = expandNames({ names: ["nope", "files", "fetch"] }, catalog, 2);
    expect(resolution.unknown).toEqual(["nope"]);
    expect(resolution.names).toEqual(["write_file", "read_file"]);
    expect(resolution.overCap).toEqual(["fetch"]);
    expect(resolution.cap).toBe(2);
    expect(expandNames([], catalog).cap).toBe(12);
  });

  it("asks for nothing on junk arguments, without throwing", () => {
    fc.assert(
      fc.property(fc.anything(), (junk) => {
        const resolution = expandNames(junk, catalog);
        expect(resolution.names.every((name) => catalogNames(catalog).includes(name))).toBe(true);
      }),
      { numRuns: 200 },
    );
    expect(expandNames(42, catalog).asked).toBe(false);
  });
});

describe("loadResult", () => {
  it("says what loaded and tells the model it already has a tool loaded before", () => {
    const text = loadResult(expandNames({ names: ["fetch", "read_file"] }, catalog), ["read_file"]);
    expect(text).toContain("Loaded: fetch.");
    expect(text).toContain("You already have read_file");
  });

  it("names the cap the resolution was held to", () => {
    const text = loadResult(expandNames({ names: ["files", "fetch"] }, catalog, 1));
    expect(text).toContain("At most 1 tools load at once");
    expect(text).toContain("write_file");
  });

  it("answers junk with how to call it", () => {
    expect(loadResult(expandNames("", catalog))).toContain('{"names"');
    expect(loadResult(expandNames({ names: ["zzz"] }, catalog))).toContain("Not in the catalogue: zzz.");
  });
});

describe("carryOver", () => {
  it("keeps the most recent tools up to the cap, oldest first", () => {
    expect(carryOver(["a", "b", "c", "a"], 2)).toEqual(["c", "a"]);
    expect(carryOver(Array.from({ length: 20 }, (_, i) => `t${i}`))).toHaveLength(16);
    expect(carryOver(undefined)).toEqual([]);
  });
});

describe("proxyLoadResult", () => {
  const tools = [tool("fetch"), tool("read_file"), tool("write_file")];

  it("writes each new tool as a line of JSON a prune will keep", () => {
    const text = proxyLoadResult(expandNames({ names: ["fetch"] }, catalog), tools);
    expect(text.split("\n")[0]).toBe(formatDefinitionLine(tool("fetch")));
    expect(holdsDefinitions({ role: "tool", tool_call_id: "x", content: text })).toBe(true);
  });

  it("points back to a definition already in the conversation instead of repeating it", () => {
    const text = proxyLoadResult(expandNames({ names: ["fetch"] }, catalog), tools, ["fetch"]);
    expect(text).toContain("fetch: already loaded");
    expect(holdsDefinitions({ role: "tool", tool_call_id: "x", content: text })).toBe(false);
  });

  it("is read back by definedTools", () => {
    const text = proxyLoadResult(expandNames({ names: ["fetch", "read_file"] }, catalog), tools);
    expect(
      definedTools([
        { role: "user", content: "{" },
        { role: "tool", tool_call_id: "a", content: text },
      ]),
    ).toEqual(["fetch", "read_file"]);
  });
});

describe("proxiedCall", () => {
  const known = ["fetch", "read_file"];

  it("reads the inner call from an object or from JSON in a string", () => {
    expect(proxiedCall({ name: "fetch", arguments: { url: "u" } }, known)).toEqual({ ok: true, name: "fetch", args: { url: "u" }, raw: '{"url":"u"}' });
    expect(proxiedCall({ name: "fetch", arguments: "{'url': 'u'}" }, known)).toMatchObject({ ok: true, args: { url: "u" } });
    expect(proxiedCall({ name: "fetch" }, known)).toMatchObject({ ok: true, args: {} });
  });

  it("refuses a name outside the catalogue, a missing name and unreadable arguments", () => {
    expect(proxiedCall({ name: "rm" }, known)).toMatchObject({ ok: false });
    expect(proxiedCall({ name: "load_tools" }, [...known, "load_tools"])).toMatchObject({ ok: false });
    expect(proxiedCall({}, known)).toMatchObject({ ok: false });
    expect(proxiedCall({ name: "fetch", arguments: "not json at all" }, known)).toMatchObject({ ok: false });
    expect(proxiedCall({ name: "fetch", arguments: 3 }, known)).toMatchObject({ ok: false });
  });
});

describe("catalogFromTools", () => {
  it("lists each tool under one server with its description's first line", () => {
    expect(catalogFromTools([tool("a")])).toEqual([{ name: "tools", tools: [{ name: "a", description: "Does a" }] }]);
    expect(catalogFromTools([])).toEqual([]);
  });
});
