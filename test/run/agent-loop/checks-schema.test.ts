import { describe, expect, it } from "vitest";
import type { ToolDefinition } from "../../../src/shapes/config.js";
import { sanitizeTools } from "../../../src/text/schema-compat.js";
import { markArgumentsChecked } from "../../../src/run/argument-validation.js";
import { withLoop, tool, calls, answer, toolNames } from "./harness.js";

describe("arguments checked against the tool's schema", () => {
  const note: ToolDefinition = {
    type: "function",
    function: {
      name: "note",
      parameters: {
        type: "object",
        properties: { path: { type: "string" }, count: { type: "integer" } },
        required: ["path"],
        additionalProperties: false,
      },
    },
  };

  it("answer a wrong type, a missing required and an extra property with the issues, and the model's corrected call runs", async () => {
    await withLoop({}, async ({ server, run, events }) => {
      const seen: Record<string, unknown>[] = [];
      server.script(
        calls(["note", { path: 3 }, "w"], ["note", { count: 2 }, "m"], ["note", { path: "a", colour: "red" }, "x"]),
        calls(["note", { path: "a", count: 2 }, "ok"]),
        answer("Noted."),
      );
      const result = await run({
        tools: [note],
        dispatch: ({ args }) => {
          seen.push(args);
          return "noted";
        },
      });
      expect(seen).toEqual([{ path: "a", count: 2 }]);
      const said = (id: string) => (result.messages.find((message) => message.role === "tool" && message.tool_call_id === id) as { content: string }).content;
      expect(said("w")).toBe(
        "The arguments for note do not match its parameters, so it was not run:\n- path: must be string\nCall it again with arguments that match its parameters.",
      );
      expect(said("m")).toContain("- path: is required");
      expect(said("x")).toContain("- colour: is not a parameter here");
      expect(said("ok")).toBe("noted");
      expect(events.filter((event) => event.kind === "invalid-arguments")).toEqual([
        { kind: "invalid-arguments", id: "w", name: "note", issues: ["path: must be string"] },
        { kind: "invalid-arguments", id: "m", name: "note", issues: ["path: is required"] },
        { kind: "invalid-arguments", id: "x", name: "note", issues: ["colour: is not a parameter here"] },
      ]);
      expect(result.metrics).toMatchObject({ invalidArguments: 3, toolErrors: 3, toolCalls: 4 });
      expect(result.toolCalls.map((entry) => entry.ok)).toEqual([false, false, false, true]);
      // The model read the issues on the request after.
      expect(JSON.stringify(server.chatBodies()[1]!.messages)).toContain("colour: is not a parameter here");
    });
  });

  it("are left alone with validateArguments: false", async () => {
    await withLoop({}, async ({ server, run }) => {
      const seen: Record<string, unknown>[] = [];
      server.script(calls(["note", { path: 3 }]), answer());
      const result = await run({ tools: [note], validateArguments: false, dispatch: ({ args }) => seen.push(args) });
      expect(seen).toEqual([{ path: 3 }]);
      expect(result.metrics.invalidArguments).toBe(0);
    });
  });

  it("are checked against the schema a sanitized tool was made from, not the strict rewrite", async () => {
    await withLoop({ profile: "openai" }, async ({ server, run }) => {
      const original: ToolDefinition = {
        type: "function",
        function: {
          name: "tag",
          parameters: { type: "object", properties: { name: { type: "string", minLength: 3 }, colour: { type: "string" } }, required: ["name"] },
        },
      };
      const [strict] = sanitizeTools([original]);
      // The strict rewrite keeps minLength only as a note in the description.
      expect((strict!.function.parameters as { properties: { name: Record<string, unknown> } }).properties.name.minLength).toBeUndefined();
      const seen: Record<string, unknown>[] = [];
      server.script(calls(["tag", { name: "ab", colour: null }, "short"]), calls(["tag", { name: "abc", colour: null }, "fine"]), answer());
      const result = await run({ tools: [strict!], dispatch: ({ args }) => seen.push(args) });
      const short = result.messages.find((message) => message.role === "tool" && message.tool_call_id === "short") as { content: string };
      expect(short.content).toContain("- name: must NOT have fewer than 3 characters");
      expect(short.content).not.toContain("colour");
      expect(seen).toHaveLength(1);
    });
  });

  it("take a strict server's null for an optional property, as dispatch is handed it without", async () => {
    await withLoop({ profile: "openai" }, async ({ server, run }) => {
      const seen: Record<string, unknown>[] = [];
      server.script(calls(["note", { path: "a", count: null }]), answer());
      await run({ tools: [note], dispatch: ({ args }) => seen.push(args) });
      expect(seen).toEqual([{ path: "a" }]);
    });
  });

  it("are left to a tool marked as checking its own, and to the tool a call_tool names in proxied mode they apply", async () => {
    await withLoop({}, async ({ server, run }) => {
      const seen: unknown[] = [];
      server.script(calls(["note", { path: 3 }]), answer());
      await run({ tools: [markArgumentsChecked({ ...note })], dispatch: ({ args }) => seen.push(args) });
      expect(seen).toEqual([{ path: 3 }]);
    });
    await withLoop({}, async ({ server, run, config }) => {
      const seen: unknown[] = [];
      server.script(calls(["call_tool", { name: "note", arguments: { path: 3 } }, "p"]), answer());
      const result = await run({ config: { ...config, toolDiscovery: "proxy" }, tools: [note], dispatch: ({ args }) => seen.push(args) });
      expect(seen).toEqual([]);
      expect((result.messages[2] as { content: string }).content).toContain("- path: must be string");
    });
  });

  it("are not checked, with one notice, for a tool whose schema cannot be compiled", async () => {
    await withLoop({}, async ({ server, run, events }) => {
      const tuple: ToolDefinition = {
        type: "function",
        function: {
          name: "pair",
          parameters: {
            $schema: "http://json-schema.org/draft-07/schema#",
            type: "object",
            properties: { at: { type: "array", items: [{ type: "number" }, { type: "number" }] } },
          },
        },
      };
      const seen: unknown[] = [];
      server.script(calls(["pair", { at: [1, 2] }]), calls(["pair", { at: "x" }]), answer());
      await run({ tools: [tuple], dispatch: ({ args }) => seen.push(args) });
      expect(seen).toHaveLength(2);
      expect(events.filter((event) => event.kind === "notice" && event.text.includes("pair could not be compiled"))).toHaveLength(1);
    });
  });
});

describe("a tool past strict mode's nesting limit", () => {
  const deep = (levels: number): ToolDefinition["function"]["parameters"] =>
    levels === 0 ? { type: "string" } : { type: "object", properties: { stage: deep(levels - 1) } };
  const explain: ToolDefinition = { type: "function", function: { name: "explain", description: "Explains a query.", parameters: deep(12) } };
  const exportTool: ToolDefinition = { type: "function", function: { name: "export", description: "Exports a query.", parameters: deep(11) } };
  const strictOf = (body: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(((body.tools as ToolDefinition[] | undefined) ?? []).map((entry) => [entry.function.name, entry.function.strict]));

  it("goes with strict off in every request, said once per tool per run however many requests and attempts follow", async () => {
    await withLoop({ profile: "openai" }, async ({ server, run, config, events }) => {
      const busy = { kind: "error", status: 429, body: { error: { message: "Rate limit reached" } }, headers: { "retry-after": "0" } } as const;
      server.script(calls(["explain", { stage: null }]), busy, calls(["export", { stage: null }]), answer());
      const notices: string[] = [];
      await run({ config: { ...config, maxRetries: 1 }, tools: [explain, exportTool, tool("find")], onNotice: (text) => notices.push(text) });
      const bodies = server.chatBodies();
      expect(bodies).toHaveLength(4);
      for (const body of bodies) expect(strictOf(body)).toEqual({ explain: false, export: false, find: true });
      const strictOff = notices.filter((text) => text.includes("strict off"));
      expect(strictOff).toHaveLength(2);
      expect(strictOff[0]).toContain("The schema of explain");
      expect(strictOff[1]).toContain("The schema of export");
      expect(events.filter((event) => event.kind === "notice" && event.text.includes("strict off"))).toHaveLength(2);

      // A second run says it again, once.
      server.script(answer());
      const again: string[] = [];
      await run({ tools: [explain, tool("find")], onNotice: (text) => again.push(text) });
      expect(again.filter((text) => text.includes("strict off"))).toEqual([strictOff[0]]);
    });
  });

  it("says nothing on a server that gets relaxed schemas", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run }) => {
      server.script(answer());
      const notices: string[] = [];
      await run({ tools: [explain], onNotice: (text) => notices.push(text) });
      const [body] = server.chatBodies();
      expect(toolNames(body!)).toEqual(["explain"]);
      expect(strictOf(body!)).toEqual({ explain: undefined });
      expect(notices.filter((text) => text.includes("strict off"))).toEqual([]);
    });
  });
});
