import { describe, expect, it } from "vitest";
import { parseSpec } from "../../src/spec.js";
import { accept, doc } from "../support/spec-documents.js";

describe("parseSpec: the version token", () => {
  it.each([["agent-core/1"], ["agent-core/1.0"], ["agent-core/1.7"]])("accepts %s, since only the major is checked", (token) => {
    expect(accept({ spec: token }).spec.spec).toBe(token);
  });

  it.each([
    ["missing", {}],
    ["null", { spec: null }],
    ["another major", { spec: "agent-core/2" }],
    ["a number", { spec: 1 }],
    ["another format", { spec: "other-agent/1" }],
    ["no major", { spec: "agent-core" }],
    ["a major with a leading zero", { spec: "agent-core/01" }],
    ["a minor with a leading zero", { spec: "agent-core/1.01" }],
  ])("refuses a token that is %s", (_label, value) => {
    const result = parseSpec(value);
    expect(result.spec).toBeUndefined();
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatch(/^spec: /);
  });
});

describe("parseSpec: the version token's refusal", () => {
  it("says what a token looks like when it cannot read one", () => {
    expect(parseSpec({ spec: "agent-core/01" }).errors).toEqual([
      'spec: "agent-core/01" is not a "agent-core/<major>" or "agent-core/<major>.<minor>" token (whole numbers without a leading zero, as in "agent-core/1")',
    ]);
  });
});

describe("parseSpec: refuses only the four document-level faults", () => {
  it.each([
    ["an array", []],
    ["a string", "agent-core/1"],
    ["null", null],
    ["a number", 42],
    ["undefined", undefined],
  ])("refuses a document that is %s, not an object", (_label, value) => {
    const result = parseSpec(value);
    expect(result.spec).toBeUndefined();
    expect(result.errors).toEqual([expect.stringMatching(/must be a JSON object/)]);
  });

  it.each([
    ["requires an unknown feature", { requires: ["telepathy"] }, "requires[0]"],
    ["requires a non-name", { requires: [7] }, "requires[0]"],
    ["requires the bundle without { bundle: true }", { requires: ["bundle"] }, "requires[0]"],
    ["has requires of the wrong kind", { requires: "prompt" }, "requires"],
    ["has model as an array", { model: [] }, "model"],
    ["has prompt as an object", { prompt: { id: "a" } }, "prompt"],
    ["has tools as a string", { tools: "all" }, "tools"],
    ["has tools.servers as a string", { tools: { servers: "all" } }, "tools.servers"],
    ["has hooks as an object", { hooks: {} }, "hooks"],
    ["has tasks as an array", { tasks: [] }, "tasks"],
    ["has bundle as an array", { bundle: [] }, "bundle"],
  ])("refuses a document that %s", (_label, fields, path) => {
    const result = parseSpec(doc(fields));
    expect(result.spec).toBeUndefined();
    expect(result.errors).toEqual([expect.stringMatching(new RegExp(`^${path.replace(/[[\].]/g, "\\$&")}: `))]);
  });

  it("refuses bundle.mcpServers of the wrong kind only when reading the bundle", () => {
    expect(parseSpec(doc({ bundle: { mcpServers: "x" } }), { bundle: true }).errors).toEqual([expect.stringMatching(/^bundle\.mcpServers: /)]);
    expect(parseSpec(doc({ bundle: { mcpServers: "x" } })).errors).toEqual([]);
  });

  it("accepts the features it understands, and those a host adds", () => {
    accept(doc({ requires: ["prompt", "tools", "hooks", "tasks"] }));
    accept(doc({ requires: ["bundle"] }), { bundle: true });
    accept(doc({ requires: ["memory"] }), { features: ["memory"] });
  });

  it.each([
    ["an unknown top-level field", { colour: "blue" }, "colour"],
    ["an unknown model field", { model: { name: "m", colour: 1 } }, "model.colour"],
    ["a string where a number goes", { model: { temperature: "0.2" } }, "model.temperature"],
    ["a number where a string goes", { model: { name: 7 } }, "model.name"],
    ["an unknown discovery mode", { tools: { discovery: "lazy" } }, "tools.discovery"],
    ["a prompt entry that is a string", { prompt: ["be brief"] }, "prompt[0]"],
    ["a prompt entry with no id", { prompt: [{ text: "x" }] }, "prompt[0]"],
    ["a prompt entry with no text", { prompt: [{ id: "x" }] }, "prompt[0]"],
    ["a task that is not an object", { tasks: { title: "small" } }, "tasks.title"],
    ["extraBody as an array", { model: { extraBody: [1] } }, "model.extraBody"],
    ["a non-string server name", { tools: { servers: ["fs", 3] } }, "tools.servers[1]"],
  ])("keeps the document and drops %s with a warning", (_label, fields, path) => {
    const { warnings } = accept(doc(fields));
    expect(warnings).toEqual([expect.stringContaining(`${path}: `)]);
  });

  it("drops a hook with an unknown event or none, but keeps one that only switches an inherited hook off", () => {
    const { spec, warnings } = accept(
      doc({
        hooks: [
          { id: "a", event: "whenever" },
          { id: "b", server: "m", tool: "t" },
          { id: "c", enabled: false },
        ],
      }),
    );
    expect(spec.hooks).toEqual([{ id: "c", enabled: false }]);
    expect(warnings).toEqual([
      expect.stringMatching(/^hooks\[0\]\.event: "whenever" is not one of sessionStart, /),
      expect.stringMatching(/^hooks\[0\]: names no event/),
      expect.stringMatching(/^hooks\[1\]: names no event/),
    ]);
  });

  it("reports every problem at once", () => {
    const result = parseSpec({
      spec: "agent-core/9",
      requires: ["telepathy", "prompt", "x-ray"],
      model: "gpt",
      tools: { servers: {}, maxIterations: -1 },
      prompt: [{ id: "a", text: 1 }],
    });
    expect(result.spec).toBeUndefined();
    expect(result.errors).toHaveLength(5);
    expect(result.warnings).toEqual([
      expect.stringContaining("prompt[0].text"),
      expect.stringContaining("prompt[0]: has no text"),
      expect.stringContaining("tools.maxIterations"),
    ]);
  });
});

describe("parseSpec: the bundle", () => {
  const bundle = {
    mcpServers: [{ name: "fs", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/data"], env: { DEBUG: "1" } }],
  };

  it("drops bundle.mcpServers with a warning unless asked for", () => {
    const { spec, warnings } = accept(doc({ bundle }));
    expect(spec.bundle).toBeUndefined();
    expect(warnings).toEqual([expect.stringMatching(/^bundle: .*\{ bundle: true \}/)]);
  });

  it("reads bundle.mcpServers under { bundle: true }, env and headers included", () => {
    expect(accept(doc({ bundle }), { bundle: true }).spec.bundle).toEqual(bundle);
  });

  it("reads a pasted .mcp.json object keyed by name as the same list", () => {
    const { spec } = accept(
      doc({
        bundle: { mcpServers: { fs: { command: "npx", args: ["x"] }, web: { type: "http", url: "https://mcp.example.com", headers: { "X-Api-Key": "k" } } } },
      }),
      { bundle: true },
    );
    expect(spec.bundle?.mcpServers).toEqual([
      { name: "fs", command: "npx", args: ["x"] },
      { name: "web", type: "http", url: "https://mcp.example.com", headers: { "X-Api-Key": "k" } },
    ]);
  });

  it("drops a server with no name, or with neither command nor url", () => {
    const { spec, warnings } = accept(doc({ bundle: { mcpServers: [{ command: "x" }, { name: "y" }, { name: "z", url: "http://h" }] } }), {
      bundle: true,
    });
    expect(spec.bundle?.mcpServers).toEqual([{ name: "z", url: "http://h" }]);
    expect(warnings).toHaveLength(2);
  });
});
