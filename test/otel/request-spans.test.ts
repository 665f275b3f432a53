/**
 * The chat spans of a step: a refusal's re-send, a retry and a continuation each their own span
 * linked to the step's first request, a wait for a loading model kept on its request, and a
 * request seen only through its events still given a span.
 */
import { describe, expect, it } from "vitest";
import { SpanStatusCode, type HrTime } from "@opentelemetry/api";
import * as conventions from "@opentelemetry/semantic-conventions/incubating";
import { AGENT_CORE_ATTRIBUTES as A, AGENT_CORE_EVENTS as E, AGENT_CORE_METRICS } from "../../src/otel.js";
import { turn, type Scripted } from "../support/endpoint.js";
import { answer, calls, eventNames, linksTo, named, points, tool, tree, withTrace } from "./harness.js";

const ms = (time: HrTime): number => time[0] * 1000 + time[1] / 1e6;
const noWait = { sleep: async () => undefined };

describe("a retried request", () => {
  it("ends failed with the retry event, and its retry is a span of its own linked to it", async () => {
    await withTrace({}, async ({ server, run, config, spans, unended }) => {
      const busy: Scripted = { kind: "error", status: 429, body: { error: { message: "Rate limit reached" } }, headers: { "retry-after": "0" } };
      server.script(busy, answer("After a retry."));
      const { result } = await run({ config: { ...config, maxRetries: 1 }, ...noWait });
      expect(result?.turn.content).toBe("After a retry.");
      const [failed, retried] = named(spans(), "chat");
      expect(failed!.status.code).toBe(SpanStatusCode.ERROR);
      expect(failed!.status.message).toContain("Rate limit reached");
      expect(failed!.attributes[conventions.ATTR_ERROR_TYPE]).toBe(conventions.ERROR_TYPE_VALUE_OTHER);
      expect(failed!.events.map((event) => [event.name, event.attributes?.[A.retryAttempt]])).toEqual([[E.retry, 1]]);
      expect(retried!.attributes).toMatchObject({ [A.requestKind]: "retry", [A.requestAttempt]: 2 });
      expect(retried!.attributes[conventions.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]).toBe(result!.usage.completion);
      expect(linksTo(retried!, failed!)).toBe(true);
      expect(unended()).toEqual([]);
    });
  });
});

describe("a wait for a loading model", () => {
  it("stays on its one request span as an event", async () => {
    await withTrace({ profile: "llama.cpp", loading: 2 }, async ({ server, run, config, spans }) => {
      server.script(answer("Loaded now."));
      await run({ config: { ...config, loadingTimeoutSeconds: 60 }, ...noWait });
      expect(server.chatBodies()).toHaveLength(3);
      const chats = named(spans(), "chat");
      expect(chats).toHaveLength(1);
      expect(eventNames(chats[0])).toEqual([E.modelLoading]);
      expect(chats[0]!.status.code).toBe(SpanStatusCode.UNSET);
    });
  });
});

describe("a reply cut off at the ceiling", () => {
  const cut = turn({ content: "Part one", finishReason: "length" });

  it("ends its first request at the cut, and the continuation carries the joined turn", async () => {
    await withTrace({ profile: "llama.cpp" }, async ({ server, run, config, spans, unended }) => {
      server.script(cut, turn({ content: " and part two." }));
      const { result } = await run({ config: { ...config, maxTokens: 5 }, maxContinuations: 1 }, { captureContent: true });
      expect(result?.turn.content).toBe("Part one and part two.");
      expect(tree(spans())).toEqual(["invoke_agent", "  chat loopback-model", "  chat loopback-model"]);
      const [first, continuation] = named(spans(), "chat");
      expect(first!.attributes[conventions.ATTR_GEN_AI_RESPONSE_FINISH_REASONS]).toEqual(["length"]);
      expect(eventNames(first)).toEqual([E.cutOff]);
      expect(JSON.parse(String(first!.attributes[conventions.ATTR_GEN_AI_OUTPUT_MESSAGES]))[0].parts).toEqual([{ type: "text", content: "Part one" }]);
      expect(continuation!.attributes).toMatchObject({
        [A.requestKind]: "continuation",
        [A.continuationRequests]: 1,
        [conventions.ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: ["stop"],
        [conventions.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: result!.usage.completion,
      });
      expect(continuation!.events.map((event) => [event.name, event.attributes?.[A.continuationOutcome]])).toEqual([[E.continuation, "continued"]]);
      expect(JSON.parse(String(continuation!.attributes[conventions.ATTR_GEN_AI_OUTPUT_MESSAGES]))[0].parts).toEqual([
        { type: "text", content: " and part two." },
      ]);
      expect(linksTo(continuation!, first!)).toBe(true);
      expect(ms(first!.endTime)).toBeLessThanOrEqual(ms(continuation!.startTime));
      expect(continuation!.status.code).toBe(SpanStatusCode.UNSET);
      expect(unended()).toEqual([]);
    });
  });

  it("leaves the turn on the first request where the continuation was refused, and marks that refused", async () => {
    await withTrace({ profile: "llama.cpp", refuse: { prefill: true } }, async ({ server, run, config, spans, metrics }) => {
      server.script(cut, answer("never read"));
      const { result } = await run({ config: { ...config, maxTokens: 5 }, maxContinuations: 1 });
      expect(result?.turn.content).toBe("Part one");
      const [first, continuation] = named(spans(), "chat");
      expect(first!.attributes[conventions.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]).toBe(result!.usage.completion);
      expect(continuation!.attributes[conventions.ATTR_ERROR_TYPE]).toBe("refused");
      expect(continuation!.status.code).toBe(SpanStatusCode.ERROR);
      expect(continuation!.attributes[conventions.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]).toBeUndefined();
      const refusals = points(await metrics(), AGENT_CORE_METRICS.refusals);
      expect(refusals.map((point) => point.attributes[A.refusalField])).toEqual(["assistant_prefill"]);
    });
  });

  it("stays one span where no continuation was asked for", async () => {
    await withTrace({}, async ({ server, run, config, spans }) => {
      server.script(cut);
      await run({ config: { ...config, maxTokens: 5 } });
      const chats = named(spans(), "chat");
      expect(chats).toHaveLength(1);
      expect(eventNames(chats[0])).toEqual([E.cutOff]);
      expect(chats[0]!.attributes[conventions.ATTR_GEN_AI_USAGE_INPUT_TOKENS]).toBeGreaterThan(0);
    });
  });
});

describe("refusals", () => {
  it("chain: each refused request ends where its refusal was said and the next re-send starts there", async () => {
    await withTrace({ refuse: { temperature: true, streamOptions: true } }, async ({ server, run, config, spans, unended }) => {
      server.script(answer());
      await run({ config: { ...config, temperature: 0.4 } });
      const chats = named(spans(), "chat");
      expect(server.chatBodies()).toHaveLength(chats.length);
      expect(chats.map((chat) => chat.attributes[A.requestKind])).toEqual(["first", ...chats.slice(1).map(() => "resend")]);
      expect(chats.map((chat) => chat.status.code)).toEqual([...chats.slice(1).map(() => SpanStatusCode.ERROR), SpanStatusCode.UNSET]);
      const fields = chats.flatMap((chat) => chat.events.filter((event) => event.name === E.refusal).map((event) => event.attributes?.[A.refusalField]));
      expect(fields.sort()).toEqual(["stream_options", "temperature"]);
      for (const later of chats.slice(1)) expect(linksTo(later, chats[0]!)).toBe(true);
      expect(chats.at(-1)!.attributes[conventions.ATTR_GEN_AI_REQUEST_TEMPERATURE]).toBeUndefined();
      expect(unended()).toEqual([]);
    });
  });

  it("said together for one refused request stay on it, and one re-send follows", async () => {
    await withTrace({ profile: "vllm" }, async ({ server, run, config, spans, unended }) => {
      // vLLM's wording for extra fields it does not take, naming both at once.
      const both: Scripted = {
        kind: "error",
        status: 400,
        body: { object: "error", message: "Unrecognized request arguments supplied: cache_prompt, slot_id", type: "BadRequestError", code: 400 },
      };
      server.script(both, answer());
      await run({ config: { ...config, extraBody: { cache_prompt: true, slot_id: 1 } } });
      expect(server.chatBodies()).toHaveLength(2);
      const [refused, resent] = named(spans(), "chat");
      expect(named(spans(), "chat")).toHaveLength(2);
      expect(refused!.events.map((event) => event.attributes?.[A.refusalField])).toEqual(["cache_prompt", "slot_id"]);
      expect(resent!.attributes[A.requestKind]).toBe("resend");
      expect(eventNames(resent)).toEqual([]);
      expect(unended()).toEqual([]);
    });
  });

  it("said by a side task before the first request stay on the run", async () => {
    await withTrace({ refuse: { responseFormat: true } }, async ({ server, run, config, spans }) => {
      server.script(answer('{"tools": ["read"]}'), answer());
      await run({ config: { ...config, toolSelectModel: "small" }, tools: [tool("read"), tool("write")], preselect: true });
      expect(server.chatBodies().map((body) => body.model)).toEqual(["small", "small", "loopback-model"]);
      const [agent] = named(spans(), "invoke_agent");
      const refusals = agent!.events.filter((event) => event.name === E.refusal);
      expect(refusals.map((event) => [event.attributes?.[A.refusalField], event.attributes?.[A.refusalModel]])).toEqual([["response_format", "small"]]);
      const chats = named(spans(), "chat");
      expect(chats).toHaveLength(1);
      expect(eventNames(chats[0])).toEqual([]);
    });
  });
});

describe("a request seen only through its events", () => {
  it("gets a span from where its step began, with the config's parameters", async () => {
    await withTrace({}, async ({ server, runtime, config, otel, spans, unended }) => {
      const { otelRun } = await import("../../src/otel.js");
      const telemetry = otelRun({ ...otel, config: { ...config, maxTokens: 64, temperature: 0.5 } });
      server.script(calls(["read", {}]), answer());
      await runtime.runAgentLoop({
        config: { ...config, maxTokens: 64, temperature: 0.5 },
        messages: [{ role: "user", content: "Go." }],
        tools: [tool("read")],
        dispatch: () => "ok",
        onEvent: telemetry.onEvent,
      });
      const all = spans();
      expect(tree(all)).toEqual(["invoke_agent", "  chat loopback-model", "  execute_tool read", "  chat loopback-model"]);
      const [first, second] = named(all, "chat");
      const [read] = named(all, "execute_tool");
      const [agent] = named(all, "invoke_agent");
      expect(first!.attributes).toMatchObject({
        [conventions.ATTR_GEN_AI_REQUEST_MAX_TOKENS]: 64,
        [conventions.ATTR_GEN_AI_REQUEST_TEMPERATURE]: 0.5,
        [A.turnIndex]: 0,
      });
      expect(second!.attributes[A.turnIndex]).toBe(1);
      expect(ms(first!.startTime)).toBe(ms(agent!.startTime));
      expect(ms(second!.startTime)).toBeGreaterThanOrEqual(ms(read!.endTime));
      expect(unended()).toEqual([]);
    });
  });
});

describe("calls written as text", () => {
  it("are noted on the request whose reply held them", async () => {
    await withTrace({}, async ({ server, run, spans }) => {
      server.script(answer('<tool_call>\n{"name": "read", "arguments": {"path": "a"}}\n</tool_call>'), answer());
      await run({ tools: [tool("read")] });
      const [first] = named(spans(), "chat");
      const recovered = first!.events.find((event) => event.name === E.toolCallsRecovered);
      expect(recovered?.attributes?.[A.recoveredCalls]).toBe(1);
      expect(named(spans(), "execute_tool")).toHaveLength(1);
    });
  });
});
