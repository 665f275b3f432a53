import { describe, expect, it } from "vitest";
import type { CatalogServer } from "../../../src/shapes/catalog.js";
import type { Message } from "../../../src/shapes/config.js";
import { createState } from "../../../src/state/state.js";
import { preselectByKeywordsIn } from "../../../src/run/preselect.js";
import { turn } from "../../support/endpoint.js";
import { withLoop, question, tool, calls, answer, toolNames, systemOf, catalog, catalogTools } from "./harness.js";

describe("a preselection", () => {
  it("shapes the first step alone by default: those tools, no catalogue, no load_tools", async () => {
    await withLoop({}, async ({ server, run, config, events }) => {
      server.script(calls(["read_file", {}]), answer());
      const result = await run({
        config: { ...config, toolDiscovery: "ondemand" },
        system: "Sys.",
        tools: catalogTools,
        catalog,
        preselected: ["read_file", "unknown_tool", "write_file"],
      });
      const [first, second] = server.chatBodies();
      expect(toolNames(first!)).toEqual(["read_file", "write_file"]);
      expect(systemOf(first!)).toBe("Sys.");
      // The catalogue and load_tools are back; the shortlisted tool the model called is loaded.
      expect(toolNames(second!)).toEqual(["load_tools", "read_file"]);
      expect(systemOf(second!)).toContain("- fetch: Fetch a page");
      expect(result.preselected).toEqual(["read_file", "write_file"]);
      const firstNotice = events.findIndex((event) => event.kind === "notice" && event.text.includes("read_file, write_file"));
      expect(firstNotice).toBeGreaterThanOrEqual(0);
      expect(firstNotice).toBeLessThan(events.findIndex((event) => event.kind === "usage"));
    });
  });

  it("routed append is loaded like a load, after what was carried, the first step sent like every other", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(calls(["read_file", {}]), answer());
      const result = await run({
        config: { ...config, toolDiscovery: "ondemand" },
        tools: catalogTools,
        catalog,
        loaded: ["fetch", "read_file"],
        preselected: ["read_file", "write_file"],
        preselectRouting: "append",
        toolOrder: false,
      });
      const [first, second] = server.chatBodies();
      expect(toolNames(first!)).toEqual(["load_tools", "fetch", "read_file", "write_file"]);
      expect(toolNames(second!)).toEqual(toolNames(first!));
      expect(systemOf(first!)).toBe(systemOf(second!));
      expect(result.preselected).toEqual(["read_file", "write_file"]);
    });
  });

  it("routed append under name order sorts a shortlisted tool in, the first step still matching the second", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(calls(["search", {}]), answer());
      await run({
        config: { ...config, toolDiscovery: "ondemand" },
        tools: catalogTools,
        catalog,
        loaded: ["write_file"],
        preselected: ["fetch"],
        preselectRouting: "append",
      });
      const [first, second] = server.chatBodies();
      expect(toolNames(first!)).toEqual(["fetch", "load_tools", "write_file"]);
      expect(toolNames(second!).slice(0, 2)).toEqual(["fetch", "load_tools"]);
      expect(systemOf(first!)).toBe(systemOf(second!));
    });
  });

  it("comes from an injected preselect function with preselect: true", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(answer());
      const asked: string[] = [];
      const result = await run({
        config: { ...config, toolDiscovery: "ondemand", toolSelectModel: "small" },
        tools: catalogTools,
        catalog,
        preselect: true,
        sideTasks: {
          preselect: ({ model, prompt, catalog: offered }) => {
            asked.push(`${model}:${prompt}:${offered.length}`);
            return ["fetch"];
          },
        },
      });
      expect(asked).toEqual([`small:${question[0]!.content}:2`]);
      expect(result.preselected).toEqual(["fetch"]);
      expect(toolNames(server.chatBodies()[0]!)).toEqual(["fetch"]);
    });
  });

  it("is asked of tasks.toolSelect's model on the agent's endpoint by default, with preselect: true", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(turn({ content: '{"tools": ["search"]}' }), answer());
      const result = await run({
        config: { ...config, toolDiscovery: "ondemand", tasks: { toolSelect: { model: "small-model" } } },
        tools: catalogTools,
        catalog,
        preselect: true,
      });
      const [asked, first] = server.chatBodies();
      expect(asked!.model).toBe("small-model");
      expect(result.preselected).toEqual(["search"]);
      expect(toolNames(first!)).toEqual(["search"]);
    });
  });

  it("is asked of toolSelectModel on the agent's endpoint where no tasks.toolSelect is given, with preselect: true", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(turn({ content: '{"tools": ["fetch"]}' }), answer());
      const result = await run({
        config: { ...config, toolDiscovery: "ondemand", toolSelectModel: "flat-small" },
        tools: catalogTools,
        catalog,
        preselect: true,
      });
      expect(server.chatBodies().map((body) => body.model)).toEqual(["flat-small", "loopback-model"]);
      expect(result.preselected).toEqual(["fetch"]);
    });
  });

  describe("with keywords an opt-in", () => {
    const weather: CatalogServer[] = [
      { name: "weather", tools: [{ name: "get-weather-forecast", description: "Get the weather forecast for a city" }] },
      ...catalog,
    ];
    const weatherTools = ["get-weather-forecast", "read_file", "write_file", "list_dir", "fetch", "search"].map((name) => tool(name));
    const words: Message[] = [{ role: "user", content: "what is the weather forecast for Lisbon" }];

    it("makes the preselection itself with tasks.toolSelect, even where the question's words alone are confident", async () => {
      expect(preselectByKeywordsIn(createState(), weather, words[0]!.content as string).confident).toBe(true);
      await withLoop({}, async ({ server, run, config }) => {
        server.script(turn({ content: '{"tools": ["fetch"]}' }), answer());
        const result = await run({
          config: { ...config, toolDiscovery: "ondemand", tasks: { toolSelect: { model: "small-model" } } },
          messages: words,
          tools: weatherTools,
          catalog: weather,
          preselect: true,
        });
        expect(server.chatBodies().map((body) => body.model)).toEqual(["small-model", "loopback-model"]);
        expect(result.preselected).toEqual(["fetch"]);
      });
    });

    it("matches keywords first under preselectKeywords, spending the model on nothing the words settle", async () => {
      await withLoop({}, async ({ server, run, config }) => {
        server.script(answer());
        const result = await run({
          config: { ...config, toolDiscovery: "ondemand", tasks: { toolSelect: { model: "small-model" } } },
          messages: words,
          tools: weatherTools,
          catalog: weather,
          preselect: true,
          preselectKeywords: true,
        });
        expect(server.chatBodies().map((body) => body.model)).toEqual(["loopback-model"]);
        expect(result.preselected[0]).toBe("get-weather-forecast");
      });
    });
  });

  it("is not asked for with an empty toolSelectModel, and a failing preselect is a notice", async () => {
    await withLoop({}, async ({ server, run, config, events }) => {
      server.script(answer(), answer());
      let calledWith = 0;
      const preselect = () => {
        calledWith += 1;
        throw new Error("small model down");
      };
      const none = await run({ config: { ...config, toolSelectModel: "" }, tools: catalogTools, preselect: true, sideTasks: { preselect } });
      expect(calledWith).toBe(0);
      expect(none.preselected).toEqual([]);
      const failed = await run({ config: { ...config, toolSelectModel: "small" }, tools: catalogTools, preselect: true, sideTasks: { preselect } });
      expect(failed.preselected).toEqual([]);
      expect(events.some((event) => event.kind === "notice" && event.text.includes("small model down"))).toBe(true);
    });
  });
});
