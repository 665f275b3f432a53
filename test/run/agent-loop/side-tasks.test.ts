import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/shapes/config.js";
import { startEndpoint, turn } from "../../support/endpoint.js";
import { validateTranscript } from "../../support/transcript.js";
import { withLoop, question, tool, calls, answer, catalog, catalogTools } from "./harness.js";

describe("compact: true", () => {
  const history: Message[] = [
    { role: "user", content: "First question. ".repeat(190) },
    { role: "assistant", content: "First answer. ".repeat(210) },
    { role: "user", content: "Second question. ".repeat(180) },
    { role: "assistant", content: "Second answer. ".repeat(200) },
    ...question,
  ];

  it("folds the transcript before a step once the contextLength window is filling, the first step included", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
      const folded: number[] = [];
      server.script(calls(["read", {}]), answer());
      const result = await run({
        config: { ...config, contextLength: 4000 },
        messages: history,
        tools: [tool("read")],
        compact: true,
        sideTasks: {
          summarise: (messages) => {
            folded.push(messages.length);
            return "Two questions were asked and answered.";
          },
        },
      });
      expect(folded).toEqual([4]);
      expect(result.messages[0]!.role).toBe("system");
      expect(String(result.messages[0]!.content)).toContain("Two questions were asked and answered.");
      expect(result.messages[1]).toEqual(question[0]);
      // The estimate was already past three quarters before the first request, so it went out folded.
      expect(server.chatRequests()[0]!.promptTokens!).toBeLessThan(1000);
      expect(validateTranscript(result.messages)).toEqual([]);
    });
  });

  it("does nothing but say so without tasks.compaction, never asking the main model", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config, events }) => {
      server.script(calls(["read", {}]), answer());
      const result = await run({ config: { ...config, contextLength: 4000 }, messages: history, tools: [tool("read")], compact: true });
      expect(result.messages.slice(0, history.length)).toEqual(history);
      expect(server.chatBodies()).toHaveLength(2);
      expect(events.filter((event) => event.kind === "notice" && event.text.includes("compact: true"))).toHaveLength(1);
    });
  });
});

describe("the loop's side tasks", () => {
  const history: Message[] = [
    { role: "user", content: "First question. ".repeat(190) },
    { role: "assistant", content: "First answer. ".repeat(210) },
    { role: "user", content: "Second question. ".repeat(180) },
    { role: "assistant", content: "Second answer. ".repeat(200) },
    ...question,
  ];

  it("are off by default, so a host that preselects or compacts itself is not sent a second request", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
      server.script(answer());
      const result = await run({
        config: { ...config, contextLength: 4000, toolSelectModel: "small", tasks: { toolSelect: { model: "small" }, compaction: { model: "summary-model" } } },
        messages: history,
        tools: catalogTools,
      });
      expect(server.chatBodies().map((body) => body.model)).toEqual(["loopback-model"]);
      expect(result.messages.slice(0, history.length)).toEqual(history);
      expect(result.preselected).toEqual([]);
    });
  });

  it("write the summary with tasks.compaction's model under compact: true", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
      server.script(answer("Two questions were asked and answered."), answer());
      const result = await run({
        config: { ...config, contextLength: 4000, tasks: { compaction: { model: "summary-model" } } },
        messages: history,
        compact: true,
      });
      expect(server.chatBodies().map((body) => body.model)).toEqual(["summary-model", "loopback-model"]);
      expect(String(result.messages[0]!.content)).toContain("Two questions were asked and answered.");
      expect(result.metrics.promptTokens).toBeLessThan(1000);
    });
  });
});

describe("side tasks on an endpoint of their own", () => {
  it("send the preselection and the summary where tasks.toolSelect and tasks.compaction point, not to the agent's endpoint", async () => {
    const side = await startEndpoint({ profile: "llama.cpp" });
    try {
      await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
        const history: Message[] = [
          { role: "user", content: "First question. ".repeat(190) },
          { role: "assistant", content: "First answer. ".repeat(210) },
          { role: "user", content: "Second question. ".repeat(180) },
          { role: "assistant", content: "Second answer. ".repeat(200) },
          { role: "user", content: "Zebra quagga okapi?" },
        ];
        side.script(turn({ content: '{"tools": ["search"]}' }), answer("Two questions."));
        server.script(answer());
        const result = await run({
          config: {
            ...config,
            toolDiscovery: "ondemand",
            contextLength: 4000,
            tasks: { toolSelect: { model: "picker", baseUrl: side.baseUrl }, compaction: { model: "folder", baseUrl: side.baseUrl } },
          },
          messages: history,
          tools: catalogTools,
          catalog,
          preselect: true,
          compact: true,
        });
        expect(
          side
            .chatBodies()
            .map((body) => body.model)
            .sort(),
        ).toEqual(["folder", "picker"]);
        expect(server.chatBodies().map((body) => body.model)).toEqual(["loopback-model"]);
        expect(result.preselected).toEqual(["search"]);
        expect(String(result.messages[0]!.content)).toContain("Two questions.");
      });
    } finally {
      await side.close();
    }
  });
});
