import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { freshEndpointCapabilities, freshModelCapabilities } from "../../src/wire/capabilities.js";
import type { Message, ToolDefinition } from "../../src/shapes/config.js";
import { buildBody, orderTools } from "../../src/wire/request-body.js";

const messages: Message[] = [{ role: "user", content: "hi" }];
const tool = (name: string): ToolDefinition => ({
  type: "function",
  function: { name, parameters: { type: "object", properties: { q: { type: "string" } } } },
});

describe("orderTools", () => {
  it("orders by name by default, whatever order they were gathered in", () => {
    expect(orderTools([tool("b"), tool("a"), tool("C")]).map((t) => t.function.name)).toEqual(["C", "a", "b"]);
  });

  it("keeps the caller's order with false, and orders another way with a comparator", () => {
    const tools = [tool("b"), tool("a"), tool("c")];
    expect(orderTools(tools, false).map((t) => t.function.name)).toEqual(["b", "a", "c"]);
    expect(orderTools(tools, (x, y) => (x.function.name < y.function.name ? 1 : -1)).map((t) => t.function.name)).toEqual(["c", "b", "a"]);
  });

  it("does not change its input", () => {
    const tools = [tool("b"), tool("a")];
    orderTools(tools);
    expect(tools.map((t) => t.function.name)).toEqual(["b", "a"]);
  });

  it("gives the same array for any arrangement of the same set", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ maxLength: 6 }), { maxLength: 12 }), fc.integer(), (names, seed) => {
        const tools = names.map(tool);
        const shuffled = [...tools].sort((a, b) => ((a.function.name.length * 31 + seed) % 7) - ((b.function.name.length * 31 + seed) % 7));
        expect(orderTools(shuffled)).toEqual(orderTools(tools));
        expect(orderTools(tools)).toHaveLength(tools.length);
      }),
    );
  });
});

describe("buildBody", () => {
  it("sends model, messages, stream and usage in the stream on a fresh endpoint", () => {
    const body = buildBody({ model: "m" }, freshEndpointCapabilities(), undefined, messages);
    expect(body).toEqual({ model: "m", messages, stream: true, stream_options: { include_usage: true } });
  });

  it("leaves stream_options out once the endpoint refused it", () => {
    const supports = { ...freshEndpointCapabilities(), usageInStream: false };
    expect(buildBody({ model: "m" }, supports, undefined, messages)).not.toHaveProperty("stream_options");
  });

  it("declares tools sanitized and in name order while strict schemas are taken, relaxed after", () => {
    const strict = buildBody({ model: "m" }, freshEndpointCapabilities(), undefined, messages, [tool("b"), tool("a")]);
    expect(strict.tools?.map((t) => t.function.name)).toEqual(["a", "b"]);
    expect(strict.tools?.every((t) => t.function.strict === true)).toBe(true);
    const relaxed = buildBody({ model: "m" }, { ...freshEndpointCapabilities(), strictSchemas: false }, undefined, messages, [tool("b"), tool("a")]);
    expect(relaxed.tools?.every((t) => t.function.strict === undefined)).toBe(true);
  });

  it("takes the tool order as its last argument", () => {
    const body = buildBody({ model: "m" }, freshEndpointCapabilities(), undefined, messages, [tool("b"), tool("a")], false);
    expect(body.tools?.map((t) => t.function.name)).toEqual(["b", "a"]);
  });

  it("leaves tools out when there are none", () => {
    expect(buildBody({ model: "m" }, freshEndpointCapabilities(), undefined, messages, [])).not.toHaveProperty("tools");
  });

  it("spells the ceiling max_tokens unless the model latched legacyTokenLimit to false", () => {
    const config = { model: "m", maxTokens: 512 };
    expect(buildBody(config, freshEndpointCapabilities(), undefined, messages)).toMatchObject({ max_tokens: 512 });
    expect(buildBody(config, freshEndpointCapabilities(), freshModelCapabilities(), messages)).toMatchObject({ max_tokens: 512 });
    const newer = buildBody(config, freshEndpointCapabilities(), { ...freshModelCapabilities(), legacyTokenLimit: false }, messages);
    expect(newer).toMatchObject({ max_completion_tokens: 512 });
    expect(newer).not.toHaveProperty("max_tokens");
  });

  it("sends no ceiling for zero or none", () => {
    const body = buildBody({ model: "m", maxTokens: 0 }, freshEndpointCapabilities(), freshModelCapabilities(), messages);
    expect(body).not.toHaveProperty("max_tokens");
    expect(body).not.toHaveProperty("max_completion_tokens");
  });

  it("sends the temperature only while the model record says it is ours to choose", () => {
    const config = { model: "m", temperature: 0.3 };
    expect(buildBody(config, freshEndpointCapabilities(), undefined, messages)).not.toHaveProperty("temperature");
    expect(buildBody(config, freshEndpointCapabilities(), freshModelCapabilities(), messages)).toMatchObject({ temperature: 0.3 });
    expect(buildBody(config, freshEndpointCapabilities(), { ...freshModelCapabilities(), chosenTemperature: false }, messages)).not.toHaveProperty(
      "temperature",
    );
  });

  it("sends the reasoning effort effortFor answers", () => {
    const config = { model: "m", reasoningEffort: "none" };
    expect(buildBody(config, freshEndpointCapabilities(), { ...freshModelCapabilities(), refusedEfforts: ["none"] }, messages)).toMatchObject({
      reasoning_effort: "minimal",
    });
    expect(buildBody({ model: "m", reasoningEffort: "off" }, freshEndpointCapabilities(), freshModelCapabilities(), messages)).not.toHaveProperty(
      "reasoning_effort",
    );
  });

  it("merges extraBody last: it overrides temperature but never model, messages, stream or tools", () => {
    const body = buildBody(
      { model: "m", temperature: 0.3, extraBody: { temperature: 0.9, top_k: 20, model: "evil", messages: [], stream: false, tools: [] } },
      freshEndpointCapabilities(),
      freshModelCapabilities(),
      messages,
      [tool("a")],
    );
    expect(body).toMatchObject({ model: "m", messages, stream: true, temperature: 0.9, top_k: 20 });
    expect(body.tools).toHaveLength(1);
  });

  it("leaves out the fields the model refused, from extraBody too", () => {
    const model = { ...freshModelCapabilities(), droppedFields: ["min_p", "chat_template_kwargs"], chosenTemperature: false };
    const body = buildBody(
      { model: "m", extraBody: { min_p: 0.1, top_k: 5, temperature: 0.2, chat_template_kwargs: { a: 1 } } },
      freshEndpointCapabilities(),
      model,
      messages,
    );
    expect(body).toMatchObject({ top_k: 5 });
    expect(body).not.toHaveProperty("min_p");
    expect(body).not.toHaveProperty("temperature");
    expect(body).not.toHaveProperty("chat_template_kwargs");
  });

  it("does not change the messages it is handed", () => {
    const given: Message[] = [{ role: "user", content: "hi" }];
    const body = buildBody({ model: "m" }, freshEndpointCapabilities(), undefined, given);
    body.messages.push({ role: "assistant", content: "x" });
    expect(given).toHaveLength(1);
  });
});

describe("buildBody's strict-off notice", () => {
  const deep = (levels: number): ToolDefinition["function"]["parameters"] =>
    levels === 0 ? { type: "string" } : { type: "object", properties: { stage: deep(levels - 1) } };
  const overDeep: ToolDefinition = { type: "function", function: { name: "explain", parameters: deep(12) } };

  it("says, with the tool's name, that a tool past strict mode's limits goes with strict off", () => {
    const heard: Array<[string, string]> = [];
    const body = buildBody({ model: "m" }, freshEndpointCapabilities(), undefined, messages, [overDeep, tool("find")], undefined, {
      onNotice: (text, name) => heard.push([text, name]),
    });
    expect(body.tools?.map((entry) => [entry.function.name, entry.function.strict])).toEqual([
      ["explain", false],
      ["find", true],
    ]);
    expect(heard.map(([, name]) => name)).toEqual(["explain"]);
    expect(heard[0]![0]).toContain("12 levels of nesting");
  });

  it("says nothing where the schemas go relaxed, since no tool is strict there", () => {
    const heard: string[] = [];
    const onNotice = (text: string): number => heard.push(text);
    buildBody({ model: "m" }, { ...freshEndpointCapabilities(), strictSchemas: false }, undefined, messages, [overDeep], undefined, { onNotice });
    buildBody({ model: "m" }, { ...freshEndpointCapabilities(), grammarConstrained: true }, undefined, messages, [overDeep], undefined, { onNotice });
    expect(heard).toEqual([]);
  });

  it("builds the same body with or without the option, and survives a callback that throws", () => {
    const plain = buildBody({ model: "m" }, freshEndpointCapabilities(), undefined, messages, [overDeep]);
    const told = buildBody({ model: "m" }, freshEndpointCapabilities(), undefined, messages, [overDeep], true, {
      onNotice: () => {
        throw new Error("host broke");
      },
    });
    expect(JSON.stringify(told)).toBe(JSON.stringify(plain));
  });
});
