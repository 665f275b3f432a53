/**
 * The invoke_agent span's own events — the preselection, a compaction between requests — and
 * the run's edges: a proxied shortlist's calls before the first request, a run that never
 * starts, and what arrives after `done`.
 */
import { describe, expect, it } from "vitest";
import * as conventions from "@opentelemetry/semantic-conventions/incubating";
import type { Message } from "../../src/index.js";
import { AGENT_CORE_ATTRIBUTES as A, AGENT_CORE_EVENTS as E, otelRun } from "../../src/otel.js";
import { answer, calls, eventNames, named, tool, tree, withTrace } from "./harness.js";

describe("the run span", () => {
  it("holds the preselection with the tools it chose", async () => {
    await withTrace({}, async ({ server, run, spans }) => {
      server.script(answer());
      await run({ tools: [tool("read"), tool("write"), tool("list")], preselected: ["write", "read"] });
      const [agent] = named(spans(), "invoke_agent");
      const preselection = agent!.events.find((event) => event.name === E.preselection);
      expect(preselection?.attributes?.[A.preselectionTools]).toEqual(["write", "read"]);
    });
  });

  it("holds a compaction that folded the transcript between two requests, and each request says whether it carries a summary", async () => {
    await withTrace({ profile: "llama.cpp" }, async ({ server, run, config, spans }) => {
      const history: Message[] = [
        { role: "user", content: "First question. ".repeat(150) },
        { role: "assistant", content: "First answer. ".repeat(150) },
        { role: "user", content: "Second question. ".repeat(150) },
        { role: "assistant", content: "Second answer. ".repeat(150) },
        { role: "user", content: "Please tidy the notes folder." },
      ];
      let folded = 0;
      let read = 0;
      // The first result takes the reported prompt past three quarters of the window, so the fold comes before the third request.
      server.script(calls(["read", {}]), calls(["read", { path: "b" }]), answer());
      await run({
        config: { ...config, contextLength: 4000 },
        messages: history,
        tools: [tool("read")],
        compact: true,
        dispatch: () => (read++ === 0 ? "note text ".repeat(300) : "ok"),
        sideTasks: {
          summarise: () => {
            folded += 1;
            return "Two questions were asked and answered.";
          },
        },
      });
      expect(folded).toBe(1);
      const [agent] = named(spans(), "invoke_agent");
      expect(eventNames(agent).filter((name) => name === E.compaction)).toHaveLength(1);
      expect(named(spans(), "chat").map((chat) => chat.attributes[A.requestSummarised])).toEqual([false, false, true]);
    });
  });

  it("holds a proxied shortlist's calls, written before the first request, as execute_tool spans", async () => {
    await withTrace({}, async ({ server, run, config, spans, unended }) => {
      server.script(answer());
      await run({ config: { ...config, toolDiscovery: "proxy" }, tools: [tool("read"), tool("write")], preselected: ["read"] });
      const all = spans();
      expect(tree(all)).toEqual(["invoke_agent", "  execute_tool load_tools", "  chat loopback-model"]);
      expect(named(all, "execute_tool")[0]!.links).toEqual([]);
      expect(unended()).toEqual([]);
    });
  });

  it("is never opened for a run that emitted nothing, and nothing after done opens another", async () => {
    await withTrace({}, async ({ otel, spans, unended }) => {
      const unused = otelRun({ ...otel });
      unused.end();
      expect(spans()).toEqual([]);
      const telemetry = otelRun({ ...otel });
      telemetry.onEvent({ kind: "done", outcome: "answered" });
      telemetry.onEvent({ kind: "tool-call", id: "late", name: "read", args: "{}" });
      telemetry.onRequest({ model: "m", messages: [], stream: true }, 0);
      telemetry.onEvent(null as never);
      telemetry.onEvent({ kind: "usage" } as never);
      expect(spans().map((span) => span.name)).toEqual(["invoke_agent"]);
      expect(unended()).toEqual([]);
    });
  });

  it("reads malformed events and requests without throwing or leaving a span open", async () => {
    await withTrace({}, async ({ otel, spans, unended }) => {
      const telemetry = otelRun({ ...otel, captureContent: true });
      const strange = [
        undefined,
        7,
        "usage",
        { kind: 7 },
        { kind: "usage", turn: "x", totals: 3 },
        { kind: "tool-result", id: {} },
        { kind: "notice" },
        { kind: "output", text: 5 },
      ];
      for (const event of strange) expect(() => telemetry.onEvent(event as never)).not.toThrow();
      expect(() => telemetry.onRequest({ messages: "no" } as never, Number.NaN)).not.toThrow();
      expect(() => telemetry.onToolCall({ id: 3 } as never)).not.toThrow();
      telemetry.onEvent({ kind: "done" });
      expect(unended()).toEqual([]);
      const [agent] = named(spans(), "invoke_agent");
      expect(agent!.attributes[A.runOutcome]).toBe("answered");
      expect(agent!.attributes[conventions.ATTR_ERROR_TYPE]).toBeUndefined();
    });
  });
});
