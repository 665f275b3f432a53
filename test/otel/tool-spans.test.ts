/**
 * The execute_tool spans: one per call, linked to the request that asked for it, with what the
 * loop did about a call — repaired its arguments, could not read them, shared an identical
 * call's answer — and a context a dispatch can make spans of its own under.
 */
import { describe, expect, it } from "vitest";
import { SpanStatusCode, context } from "@opentelemetry/api";
import * as conventions from "@opentelemetry/semantic-conventions/incubating";
import { AGENT_CORE_ATTRIBUTES as A, AGENT_CORE_EVENTS as E, otelRun } from "../../src/otel.js";
import { answer, calls, eventNames, linksTo, named, question, tool, tree, withTrace } from "./harness.js";

describe("an identical call made twice in a step", () => {
  it("is two spans, the second marked as sharing the first's answer", async () => {
    await withTrace({}, async ({ server, run, spans }) => {
      let dispatched = 0;
      server.script(calls(["read", { path: "a" }], ["read", { path: "a" }], ["read", { path: "b" }]), answer());
      await run({
        tools: [tool("read")],
        dispatch: () => {
          dispatched += 1;
          return "text";
        },
      });
      expect(dispatched).toBe(2);
      const [first, repeat, other] = named(spans(), "execute_tool");
      expect(first!.attributes[A.toolDeduplicated]).toBeUndefined();
      expect(repeat!.attributes).toMatchObject({
        [A.toolDeduplicated]: true,
        [A.toolOriginalCallId]: "call_0",
        [conventions.ATTR_GEN_AI_TOOL_CALL_ID]: "call_1",
      });
      expect(eventNames(repeat)).toEqual([E.toolCallDeduplicated]);
      expect(other!.attributes[A.toolDeduplicated]).toBeUndefined();
    });
  });

  it("is not marked where dedupeToolCalls is off and both ran", async () => {
    await withTrace({}, async ({ server, run, spans }) => {
      server.script(calls(["read", { path: "a" }], ["read", { path: "a" }]), answer());
      await run({ tools: [tool("read")], dedupeToolCalls: false });
      expect(named(spans(), "execute_tool").map((span) => span.attributes[A.toolDeduplicated])).toEqual([undefined, undefined]);
    });
  });
});

describe("a call whose arguments did not parse as written", () => {
  it("is marked repaired where they were mended, and unreadable where they could not be read", async () => {
    await withTrace({}, async ({ server, run, spans }) => {
      server.script(calls(["read", "{'path': 'a'}"], ["read", "just some words"]), answer());
      const { result } = await run({ tools: [tool("read")] });
      expect(result?.toolCalls.map((call) => call.ok)).toEqual([true, false]);
      const [repaired, unreadable] = named(spans(), "execute_tool");
      expect(eventNames(repaired)).toEqual([E.toolCallRepaired]);
      expect(repaired!.status.code).toBe(SpanStatusCode.UNSET);
      expect(eventNames(unreadable)).toEqual([E.toolCallUnreadable]);
      expect(unreadable!.status.code).toBe(SpanStatusCode.ERROR);
      expect(unreadable!.attributes[conventions.ATTR_ERROR_TYPE]).toBe(conventions.ERROR_TYPE_VALUE_OTHER);
    });
  });

  it("is not marked where they parsed", async () => {
    await withTrace({}, async ({ server, run, spans }) => {
      server.script(calls(["read", '{"path": "a"}'], ["read", ""]), answer());
      await run({ tools: [tool("read")] });
      expect(named(spans(), "execute_tool").map(eventNames)).toEqual([[], []]);
    });
  });
});

describe("a call's span", () => {
  it("is the parent of what its dispatch traces under toolContext, and links to the request that asked for it", async () => {
    await withTrace({}, async ({ server, runtime, config, otel, spans, unended }) => {
      const telemetry = otelRun({ ...otel, config });
      server.script(calls(["fetch", { url: "a" }]), answer());
      await runtime.runAgentLoop({
        config,
        messages: question,
        tools: [tool("fetch")],
        ...telemetry.handlers,
        dispatch: async ({ id }) => {
          const parent = telemetry.toolContext(id);
          expect(parent).toBeDefined();
          const inner = otel.tracer!.startSpan("GET /a", {}, parent ?? context.active());
          await new Promise((resolve) => setTimeout(resolve, 2));
          inner.end();
          return "page";
        },
      });
      expect(tree(spans())).toEqual(["invoke_agent", "  chat loopback-model", "  execute_tool fetch", "    GET /a", "  chat loopback-model"]);
      expect(telemetry.toolContext("call_0")).toBeUndefined();
      const [fetch] = named(spans(), "execute_tool");
      expect(linksTo(fetch!, named(spans(), "chat")[0]!)).toBe(true);
      expect(unended()).toEqual([]);
    });
  });

  it("fails with error.type for a tool that threw, its words kept out unless content is on", async () => {
    for (const captureContent of [false, true]) {
      await withTrace({}, async ({ server, run, spans }) => {
        server.script(calls(["read", {}]), answer());
        await run(
          {
            tools: [tool("read")],
            dispatch: () => {
              throw new Error("no such note: private/diary.md");
            },
          },
          { captureContent },
        );
        const [read] = named(spans(), "execute_tool");
        expect(read!.status.code).toBe(SpanStatusCode.ERROR);
        expect(read!.attributes[conventions.ATTR_ERROR_TYPE]).toBe(conventions.ERROR_TYPE_VALUE_OTHER);
        expect(read!.status.message === undefined ? "" : read!.status.message).toBe(captureContent ? "no such note: private/diary.md" : "");
      });
    }
  });

  it("is opened for each of a step's calls run together, and each ends when its own result lands", async () => {
    await withTrace({}, async ({ server, run, spans, unended }) => {
      server.script(calls(["slow", {}], ["quick", {}]), answer());
      await run({
        tools: [tool("slow"), tool("quick")],
        parallel: true,
        dispatch: async ({ name }) => {
          await new Promise((resolve) => setTimeout(resolve, name === "slow" ? 30 : 1));
          return name;
        },
      });
      const [slow, quick] = named(spans(), "execute_tool");
      const end = (span: typeof slow) => span!.endTime[0] * 1e3 + span!.endTime[1] / 1e6;
      expect(end(quick)).toBeLessThan(end(slow));
      expect(unended()).toEqual([]);
    });
  });
});
