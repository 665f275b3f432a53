/**
 * The otel entry against the real OpenTelemetry SDK, over runs against the loopback endpoint:
 * the span tree, names, attributes and events of an eager run, an ondemand run with a refusal
 * and a cache break, a failed run and a stopped one, with every span ended in every outcome.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, trace, type Context, type ContextManager, type HrTime } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import type { MetricData } from "@opentelemetry/sdk-metrics";
import * as conventions from "@opentelemetry/semantic-conventions/incubating";
import { AGENT_CORE_ATTRIBUTES, AGENT_CORE_EVENTS, AGENT_CORE_METRICS, otelRun } from "../src/otel.js";
import { answer, calls, countOf, eventNames, linksTo, named, points, question, tool, tree, withTrace } from "./otel/harness.js";
import { turn } from "./support/endpoint.js";

const ms = (time: HrTime): number => time[0] * 1000 + time[1] / 1e6;

const published: ReadonlySet<string> = new Set(
  Object.entries(conventions as Record<string, unknown>)
    .filter(([name, value]) => /^(ATTR|METRIC|EVENT)_/.test(name) && typeof value === "string")
    .map(([, value]) => value as string),
);
const ours: ReadonlySet<string> = new Set([...Object.values(AGENT_CORE_ATTRIBUTES), ...Object.values(AGENT_CORE_EVENTS), ...Object.values(AGENT_CORE_METRICS)]);

/** Every attribute, event and metric name is a published convention's or one of this library's own. */
function unknownNames(spans: readonly ReadableSpan[], metrics: readonly MetricData[] = []): string[] {
  const names = new Set<string>();
  for (const span of spans) {
    for (const key of Object.keys(span.attributes)) names.add(key);
    for (const event of span.events) {
      names.add(event.name);
      for (const key of Object.keys(event.attributes ?? {})) names.add(key);
    }
  }
  for (const metric of metrics) {
    names.add(metric.descriptor.name);
    for (const point of metric.dataPoints) for (const key of Object.keys(point.attributes)) names.add(key);
  }
  return [...names].filter((name) => !published.has(name) && !ours.has(name));
}

const catalog = [
  {
    name: "web",
    tools: [
      { name: "fetch", description: "Fetch a page" },
      { name: "search", description: "Search the web" },
    ],
  },
];

describe("otelRun on an eager run", () => {
  it("gives an invoke_agent span with a chat span per request and an execute_tool span per call under it", async () => {
    await withTrace({ profile: "llama.cpp", prefixCache: true }, async ({ server, run, config, spans, unended, metrics }) => {
      server.script(calls(["read", { path: "a" }]), answer("All tidy."));
      const { result } = await run({ config: { ...config, maxTokens: 256, temperature: 0.2 }, tools: [tool("read")] }, { agentName: "notes" });
      expect(result?.turn.content).toBe("All tidy.");
      const all = spans();
      expect(tree(all)).toEqual(["invoke_agent notes", "  chat loopback-model", "  execute_tool read", "  chat loopback-model"]);
      expect(unended()).toEqual([]);

      const [agent] = named(all, "invoke_agent");
      const chats = named(all, "chat");
      const [read] = named(all, "execute_tool");
      expect(agent!.parentSpanContext).toBeUndefined();
      expect(agent!.kind).toBe(SpanKind.INTERNAL);
      expect(agent!.status.code).toBe(SpanStatusCode.UNSET);
      const port = Number(new URL(server.baseUrl).port);
      expect(agent!.attributes).toMatchObject({
        [conventions.ATTR_GEN_AI_OPERATION_NAME]: conventions.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
        [conventions.ATTR_GEN_AI_PROVIDER_NAME]: conventions.GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
        [conventions.ATTR_GEN_AI_AGENT_NAME]: "notes",
        [conventions.ATTR_GEN_AI_REQUEST_MODEL]: "loopback-model",
        [conventions.ATTR_SERVER_ADDRESS]: "127.0.0.1",
        [conventions.ATTR_SERVER_PORT]: port,
        [conventions.ATTR_GEN_AI_USAGE_INPUT_TOKENS]: result!.usage.prompt,
        [conventions.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: result!.usage.completion,
        [conventions.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: result!.usage.cached,
        [AGENT_CORE_ATTRIBUTES.runOutcome]: "answered",
        [AGENT_CORE_ATTRIBUTES.runTurns]: 2,
        [AGENT_CORE_ATTRIBUTES.runToolCalls]: 1,
      });
      expect(agent!.attributes[conventions.ATTR_ERROR_TYPE]).toBeUndefined();

      chats.forEach((chat, index) => {
        const turn = result!.metrics.turnMetrics[index]!;
        expect(chat.kind).toBe(SpanKind.CLIENT);
        expect(chat.parentSpanContext?.spanId).toBe(agent!.spanContext().spanId);
        expect(chat.attributes).toMatchObject({
          [conventions.ATTR_GEN_AI_OPERATION_NAME]: conventions.GEN_AI_OPERATION_NAME_VALUE_CHAT,
          [conventions.ATTR_GEN_AI_REQUEST_MODEL]: "loopback-model",
          [conventions.ATTR_GEN_AI_REQUEST_MAX_TOKENS]: 256,
          [conventions.ATTR_GEN_AI_REQUEST_TEMPERATURE]: 0.2,
          [conventions.ATTR_GEN_AI_REQUEST_STREAM]: true,
          [conventions.ATTR_GEN_AI_USAGE_INPUT_TOKENS]: turn.prompt,
          [conventions.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: turn.completion,
          [conventions.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: turn.cached,
          [conventions.ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [index === 0 ? "tool_calls" : "stop"],
          [conventions.ATTR_SERVER_ADDRESS]: "127.0.0.1",
          [conventions.ATTR_SERVER_PORT]: port,
          [AGENT_CORE_ATTRIBUTES.turnIndex]: index,
          [AGENT_CORE_ATTRIBUTES.requestKind]: "first",
          [AGENT_CORE_ATTRIBUTES.requestToolsDeclared]: 1,
          [AGENT_CORE_ATTRIBUTES.llamaPrefillMs]: turn.timings!.promptMs!,
          [AGENT_CORE_ATTRIBUTES.llamaDecodeMs]: turn.timings!.predictedMs!,
          [AGENT_CORE_ATTRIBUTES.llamaCachedPromptTokens]: turn.timings!.cacheN!,
        });
        expect(chat.attributes[conventions.ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK]).toBeCloseTo(turn.firstTokenMs! / 1000, 6);
        expect(chat.status.code).toBe(SpanStatusCode.UNSET);
      });
      expect(chats[1]!.attributes[AGENT_CORE_ATTRIBUTES.cacheBroken]).toBe(false);

      expect(read!.parentSpanContext?.spanId).toBe(agent!.spanContext().spanId);
      expect(linksTo(read!, chats[0]!)).toBe(true);
      expect(read!.attributes).toMatchObject({
        [conventions.ATTR_GEN_AI_OPERATION_NAME]: conventions.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
        [conventions.ATTR_GEN_AI_TOOL_NAME]: "read",
        [conventions.ATTR_GEN_AI_TOOL_CALL_ID]: "call_0",
        [conventions.ATTR_GEN_AI_TOOL_TYPE]: "function",
      });
      // The run's time holds its children's, each request before the call it asked for, the call before the next request.
      expect(ms(chats[0]!.endTime)).toBeLessThanOrEqual(ms(read!.startTime));
      expect(ms(read!.endTime)).toBeLessThanOrEqual(ms(chats[1]!.startTime));
      for (const span of [...chats, read!]) {
        expect(ms(span.startTime)).toBeGreaterThanOrEqual(ms(agent!.startTime));
        expect(ms(span.endTime)).toBeLessThanOrEqual(ms(agent!.endTime));
      }
      expect(unknownNames(all, await metrics())).toEqual([]);
    });
  });

  it("records the conventions' token and duration histograms per request and per run", async () => {
    await withTrace({ profile: "llama.cpp" }, async ({ server, run, metrics }) => {
      server.script(calls(["read", {}]), answer());
      const { result } = await run({ tools: [tool("read")] });
      const recorded = await metrics();
      const tokens = points(recorded, conventions.METRIC_GEN_AI_CLIENT_TOKEN_USAGE);
      const input = tokens.find((point) => point.attributes[conventions.ATTR_GEN_AI_TOKEN_TYPE] === conventions.GEN_AI_TOKEN_TYPE_VALUE_INPUT)!;
      const output = tokens.find((point) => point.attributes[conventions.ATTR_GEN_AI_TOKEN_TYPE] === conventions.GEN_AI_TOKEN_TYPE_VALUE_OUTPUT)!;
      expect(countOf(input)).toBe(2);
      expect((input.value as { sum: number }).sum).toBe(result!.usage.prompt);
      expect((output.value as { sum: number }).sum).toBe(result!.usage.completion);
      expect(input.attributes).toMatchObject({
        [conventions.ATTR_GEN_AI_OPERATION_NAME]: "chat",
        [conventions.ATTR_GEN_AI_REQUEST_MODEL]: "loopback-model",
        [conventions.ATTR_SERVER_ADDRESS]: "127.0.0.1",
      });
      const durations = points(recorded, conventions.METRIC_GEN_AI_CLIENT_OPERATION_DURATION);
      const byOperation = Object.fromEntries(durations.map((point) => [String(point.attributes[conventions.ATTR_GEN_AI_OPERATION_NAME]), countOf(point)]));
      expect(byOperation).toEqual({ chat: 2, invoke_agent: 1 });
      expect(recorded.find((metric) => metric.descriptor.name === conventions.METRIC_GEN_AI_CLIENT_OPERATION_DURATION)?.descriptor.unit).toBe("s");
    });
  });
});

describe("otelRun on an ondemand run", () => {
  it("splits a refused request from its re-send, linked, and puts the cache break on the request that found it", async () => {
    await withTrace({ profile: "llama.cpp", prefixCache: true, refuse: { temperature: true } }, async ({ server, run, config, spans, unended, metrics }) => {
      server.script(calls(["load_tools", { names: ["fetch"] }]), calls(["fetch", {}]), answer());
      const { result } = await run({
        config: { ...config, toolDiscovery: "ondemand", temperature: 0.2 },
        system: "You tidy notes.",
        tools: [tool("fetch"), tool("search")],
        catalog,
        dispatch: () => "page text ".repeat(300),
      });
      expect(result?.metrics.cacheBreaksByReason).toEqual({ "tools-changed": 1 });
      const all = spans();
      expect(tree(all)).toEqual([
        "invoke_agent",
        "  chat loopback-model",
        "  chat loopback-model",
        "  execute_tool load_tools",
        "  chat loopback-model",
        "  execute_tool fetch",
        "  chat loopback-model",
      ]);
      expect(unended()).toEqual([]);
      const [refused, resent, found, last] = named(all, "chat");
      expect(refused!.attributes).toMatchObject({
        [AGENT_CORE_ATTRIBUTES.requestKind]: "first",
        [conventions.ATTR_ERROR_TYPE]: "refused",
        [conventions.ATTR_GEN_AI_REQUEST_TEMPERATURE]: 0.2,
      });
      expect(refused!.status.code).toBe(SpanStatusCode.ERROR);
      expect(
        refused!.events.map((event) => [
          event.name,
          event.attributes?.[AGENT_CORE_ATTRIBUTES.refusalField],
          event.attributes?.[AGENT_CORE_ATTRIBUTES.refusalScope],
        ]),
      ).toEqual([[AGENT_CORE_EVENTS.refusal, "temperature", "model"]]);
      expect(refused!.attributes[conventions.ATTR_GEN_AI_USAGE_INPUT_TOKENS]).toBeUndefined();
      expect(resent!.attributes).toMatchObject({
        [AGENT_CORE_ATTRIBUTES.requestKind]: "resend",
        [AGENT_CORE_ATTRIBUTES.requestAttempt]: 2,
        [AGENT_CORE_ATTRIBUTES.turnIndex]: 0,
      });
      expect(resent!.attributes[conventions.ATTR_GEN_AI_REQUEST_TEMPERATURE]).toBeUndefined();
      expect(resent!.attributes[conventions.ATTR_GEN_AI_USAGE_INPUT_TOKENS]).toBe(result!.metrics.turnMetrics[0]!.prompt);
      expect(linksTo(resent!, refused!)).toBe(true);
      expect(ms(refused!.endTime)).toBeLessThanOrEqual(ms(resent!.startTime));
      expect(resent!.status.code).toBe(SpanStatusCode.UNSET);

      expect(found!.attributes).toMatchObject({
        [AGENT_CORE_ATTRIBUTES.cacheBroken]: true,
        [AGENT_CORE_ATTRIBUTES.cacheBreakReason]: "tools-changed",
        [AGENT_CORE_ATTRIBUTES.turnIndex]: 1,
      });
      const cacheBreak = found!.events.find((event) => event.name === AGENT_CORE_EVENTS.cacheBreak);
      expect(cacheBreak?.attributes).toMatchObject({
        [AGENT_CORE_ATTRIBUTES.cacheBreakReason]: "tools-changed",
        [AGENT_CORE_ATTRIBUTES.cacheExpected]: result!.metrics.turnMetrics[1]!.cacheExpected!,
      });
      expect(eventNames(last)).toEqual([]);
      expect(named(all, "invoke_agent")[0]!.attributes[AGENT_CORE_ATTRIBUTES.toolDiscovery]).toBe("ondemand");

      const recorded = await metrics();
      expect(
        points(recorded, AGENT_CORE_METRICS.refusals).map((point) => [
          point.attributes[AGENT_CORE_ATTRIBUTES.refusalField],
          point.attributes[AGENT_CORE_ATTRIBUTES.refusalScope],
          point.value,
        ]),
      ).toEqual([["temperature", "model", 1]]);
      expect(points(recorded, AGENT_CORE_METRICS.cacheBreaks).map((point) => [point.attributes[AGENT_CORE_ATTRIBUTES.cacheBreakReason], point.value])).toEqual([
        ["tools-changed", 1],
      ]);
      const refusedDuration = points(recorded, conventions.METRIC_GEN_AI_CLIENT_OPERATION_DURATION).find(
        (point) => point.attributes[conventions.ATTR_ERROR_TYPE] === "refused",
      );
      expect(refusedDuration && countOf(refusedDuration)).toBe(1);
      expect(unknownNames(all, recorded)).toEqual([]);
    });
  });
});

describe("otelRun on a failed run", () => {
  it("ends the run and the request that failed with error.type and the failure's words", async () => {
    await withTrace({}, async ({ server, run, spans, unended, metrics }) => {
      server.script({ kind: "error", status: 401, body: { error: { message: "Incorrect API key provided" } } });
      const { error } = await run();
      expect(error).toBeInstanceOf(Error);
      const all = spans();
      expect(tree(all)).toEqual(["invoke_agent", "  chat loopback-model"]);
      expect(unended()).toEqual([]);
      const [agent] = named(all, "invoke_agent");
      const [chat] = named(all, "chat");
      for (const span of [agent!, chat!]) {
        expect(span.status.code).toBe(SpanStatusCode.ERROR);
        expect(span.status.message).toContain("Incorrect API key provided");
        expect(span.attributes[conventions.ATTR_ERROR_TYPE]).toBe(conventions.ERROR_TYPE_VALUE_OTHER);
      }
      expect(agent!.attributes[AGENT_CORE_ATTRIBUTES.runOutcome]).toBe("failed");
      const failed = points(await metrics(), conventions.METRIC_GEN_AI_CLIENT_OPERATION_DURATION).filter(
        (point) => point.attributes[conventions.ATTR_ERROR_TYPE] === "_OTHER",
      );
      expect(failed.map((point) => point.attributes[conventions.ATTR_GEN_AI_OPERATION_NAME]).sort()).toEqual(["chat", "invoke_agent"]);
    });
  });

  it("ends every span when the stream drops after a tool step, or the host's onMessage throws", async () => {
    await withTrace({}, async ({ server, run, spans, unended }) => {
      server.script(calls(["read", {}]), { kind: "drop", afterChunks: [] });
      const dropped = await run({ tools: [tool("read")] });
      expect(dropped.error).toBeInstanceOf(Error);
      expect(tree(spans())).toEqual(["invoke_agent", "  chat loopback-model", "  execute_tool read", "  chat loopback-model"]);
      const chats = named(spans(), "chat");
      expect(chats.map((chat) => chat.status.code)).toEqual([SpanStatusCode.UNSET, SpanStatusCode.ERROR]);
      expect(unended()).toEqual([]);

      server.script(calls(["read", {}]));
      const thrown = await run({
        tools: [tool("read")],
        onMessage: (message) => {
          if (message.role === "tool") throw new Error("the store is full");
        },
      });
      expect(thrown.error).toBeInstanceOf(Error);
      const second = named(spans(), "invoke_agent")[1]!;
      expect(second.status.message).toBe("the store is full");
      expect(unended()).toEqual([]);
    });
  });
});

describe("otelRun on a stopped run", () => {
  it("marks the call the stop cut short, notes the call never reached, and ends every span", async () => {
    await withTrace({}, async ({ server, run, spans, unended }) => {
      const controller = new AbortController();
      server.script(calls(["quick", {}], ["slow", {}], ["later", {}]));
      const { error } = await run({
        tools: [tool("quick"), tool("slow"), tool("later")],
        signal: controller.signal,
        dispatch: ({ name }) => {
          if (name !== "slow") return "fine";
          setTimeout(() => controller.abort(new Error("user pressed stop")), 5);
          return new Promise(() => undefined);
        },
      });
      expect(error).toBeInstanceOf(Error);
      const all = spans();
      expect(tree(all)).toEqual(["invoke_agent", "  chat loopback-model", "  execute_tool quick", "  execute_tool slow"]);
      expect(unended()).toEqual([]);
      const [agent] = named(all, "invoke_agent");
      const [quick, slow] = named(all, "execute_tool");
      expect(quick!.status.code).toBe(SpanStatusCode.UNSET);
      expect(slow!.status.code).toBe(SpanStatusCode.ERROR);
      expect(slow!.attributes[conventions.ATTR_ERROR_TYPE]).toBe("stopped");
      expect(agent!.attributes).toMatchObject({ [AGENT_CORE_ATTRIBUTES.runOutcome]: "stopped", [conventions.ATTR_ERROR_TYPE]: "stopped" });
      expect(agent!.status.code).toBe(SpanStatusCode.ERROR);
      const notRun = agent!.events.find((event) => event.name === AGENT_CORE_EVENTS.toolCallNotRun);
      expect(notRun?.attributes).toMatchObject({ [conventions.ATTR_GEN_AI_TOOL_NAME]: "later", [conventions.ATTR_GEN_AI_TOOL_CALL_ID]: "call_2" });
      expect(unknownNames(all)).toEqual([]);
    });
  });

  it("ends the request a stop cut off mid-reply as stopped", async () => {
    await withTrace({}, async ({ server, run, spans, unended }) => {
      const controller = new AbortController();
      server.script({ kind: "stall", afterChunks: [{ choices: [{ index: 0, delta: { content: "Half an ans" } }] }] });
      const { error } = await run({ signal: controller.signal }, { onEvent: (event) => event.kind === "output" && controller.abort(new Error("stop")) });
      expect(error).toBeInstanceOf(Error);
      const all = spans();
      expect(tree(all)).toEqual(["invoke_agent", "  chat loopback-model"]);
      expect(unended()).toEqual([]);
      const [chat] = named(all, "chat");
      expect(chat!.status.code).toBe(SpanStatusCode.ERROR);
      expect(chat!.attributes[conventions.ATTR_ERROR_TYPE]).toBe("stopped");
    });
  });
});

describe("the run span's parent", () => {
  it("is the context given, else the one active when otelRun is called, else none", async () => {
    await withTrace({}, async ({ server, run, otel, spans }) => {
      const host = otel.tracer!.startSpan("handle request");
      server.script(answer(), answer(), answer());
      await run({}, { context: trace.setSpan(ROOT_CONTEXT, host) });

      // A context manager as small as the API allows, registered only for this test.
      let active: Context = ROOT_CONTEXT;
      const manager: ContextManager = {
        active: () => active,
        with: (given, work, self, ...args) => {
          const before = active;
          active = given;
          try {
            return work.call(self, ...args);
          } finally {
            active = before;
          }
        },
        bind: (_given, target) => target,
        enable() {
          return this;
        },
        disable() {
          return this;
        },
      };
      expect(context.setGlobalContextManager(manager)).toBe(true);
      try {
        const telemetry = context.with(trace.setSpan(ROOT_CONTEXT, host), () => otelRun({ ...otel }));
        telemetry.onEvent({ kind: "done", outcome: "answered" });
      } finally {
        context.disable();
      }
      await run();
      host.end();
      const agents = named(spans(), "invoke_agent");
      expect(agents.map((agent) => agent.parentSpanContext?.spanId)).toEqual([host.spanContext().spanId, host.spanContext().spanId, undefined]);
      expect(new Set(agents.map((agent) => agent.spanContext().traceId)).size).toBe(2);
    });
  });
});

describe("message content", () => {
  const secretConfig = { apiKey: "sk-secret-key-0042", headers: { "x-api-secret": "header-secret-0042" } };
  const everything = (spans: readonly ReadableSpan[]): string =>
    JSON.stringify(spans.map((span) => [span.name, span.attributes, span.status, span.events.map((event) => [event.name, event.attributes])]));

  it("is left out by default", async () => {
    await withTrace({}, async ({ server, run, config, spans }) => {
      server.script(calls(["read", { path: "notes/a.md" }]), answer("The folder is tidy."));
      await run({ config: { ...config, ...secretConfig }, system: "You tidy notes.", tools: [tool("read")] });
      const text = everything(spans());
      for (const word of ["tidy the notes", "You tidy notes", "notes/a.md", "read ran with", "The folder is tidy", "secret-key", "header-secret"])
        expect(text).not.toContain(word);
      for (const name of [
        conventions.ATTR_GEN_AI_INPUT_MESSAGES,
        conventions.ATTR_GEN_AI_OUTPUT_MESSAGES,
        conventions.ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
        conventions.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
        conventions.ATTR_GEN_AI_TOOL_CALL_RESULT,
      ]) {
        expect(text).not.toContain(name);
      }
    });
  });

  it("is recorded under the conventions' names when asked for, and never the key or a header", async () => {
    await withTrace({}, async ({ server, run, config, spans }) => {
      server.script(
        turn({ reasoning: "Look first.", toolCalls: [{ name: "read", arguments: { path: "notes/a.md" }, id: "call_0" }] }),
        answer("The folder is tidy."),
      );
      await run({ config: { ...config, ...secretConfig }, system: "You tidy notes.", tools: [tool("read")] }, { captureContent: true });
      const all = spans();
      const [first, second] = named(all, "chat");
      const [read] = named(all, "execute_tool");
      expect(JSON.parse(String(first!.attributes[conventions.ATTR_GEN_AI_SYSTEM_INSTRUCTIONS]))).toEqual([{ type: "text", content: "You tidy notes." }]);
      expect(JSON.parse(String(first!.attributes[conventions.ATTR_GEN_AI_INPUT_MESSAGES]))).toEqual([
        { role: "user", parts: [{ type: "text", content: question[0]!.content }] },
      ]);
      expect(JSON.parse(String(first!.attributes[conventions.ATTR_GEN_AI_OUTPUT_MESSAGES]))).toEqual([
        { role: "assistant", parts: [{ type: "reasoning", content: "Look first." }], finish_reason: "tool_calls" },
      ]);
      const input = JSON.parse(String(second!.attributes[conventions.ATTR_GEN_AI_INPUT_MESSAGES])) as Array<{
        role: string;
        parts: Array<Record<string, unknown>>;
      }>;
      expect(input.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
      expect(input[1]!.parts).toContainEqual({ type: "tool_call", id: "call_0", name: "read", arguments: { path: "notes/a.md" } });
      expect(input[2]!.parts).toEqual([{ type: "tool_call_response", id: "call_0", response: 'read ran with {"path":"notes/a.md"}' }]);
      expect(JSON.parse(String(second!.attributes[conventions.ATTR_GEN_AI_OUTPUT_MESSAGES]))).toEqual([
        { role: "assistant", parts: [{ type: "text", content: "The folder is tidy." }], finish_reason: "stop" },
      ]);
      expect(read!.attributes[conventions.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]).toBe('{"path":"notes/a.md"}');
      expect(read!.attributes[conventions.ATTR_GEN_AI_TOOL_CALL_RESULT]).toBe('read ran with {"path":"notes/a.md"}');
      const text = everything(all);
      expect(text).not.toContain("secret-key");
      expect(text).not.toContain("header-secret");
      expect(unknownNames(all)).toEqual([]);
    });
  });
});

describe("the handlers", () => {
  it("call the host's own with the same arguments, and telemetry that throws never reaches the run", async () => {
    await withTrace({}, async ({ server, runtime, config, otel }) => {
      const heard: string[] = [];
      const broken = {
        ...otel.tracer!,
        startSpan: () => {
          throw new Error("exporter down");
        },
      } as unknown as typeof otel.tracer;
      const telemetry = otelRun({
        tracer: broken,
        meter: otel.meter,
        config,
        onEvent: (event) => heard.push(`event:${event.kind}`),
        onRequest: (_body, step) => heard.push(`request:${step}`),
        onToolCall: (request) => heard.push(`call:${request.name}`),
      });
      server.script(calls(["read", {}]), answer("Still answered."));
      const result = await runtime.runAgentLoop({ config, messages: question, tools: [tool("read")], dispatch: () => "ok", ...telemetry.handlers });
      expect(result.turn.content).toBe("Still answered.");
      expect(heard.filter((entry) => entry !== "event:output")).toEqual([
        "request:0",
        "event:usage",
        "call:read",
        "event:tool-call",
        "event:tool-result",
        "request:1",
        "event:usage",
        "event:done",
      ]);
      expect(heard).toContain("event:output");
      telemetry.end();
    });
  });

  it("end() closes what a run driven by hand left open, failed with an error's words or unfinished", async () => {
    await withTrace({}, async ({ otel, spans, unended }) => {
      const manual = otelRun({ ...otel });
      manual.onEvent({ kind: "tool-call", id: "c1", name: "read", args: "{}" });
      expect(unended()).toEqual(["invoke_agent", "execute_tool read"]);
      manual.end();
      manual.onEvent({ kind: "tool-call", id: "c2", name: "read", args: "{}" });
      expect(unended()).toEqual([]);
      const failing = otelRun({ ...otel });
      failing.end(new Error("the host gave up"));
      const [first, second] = named(spans(), "invoke_agent");
      expect(first!.attributes[AGENT_CORE_ATTRIBUTES.runOutcome]).toBe("unfinished");
      expect(first!.status.code).toBe(SpanStatusCode.UNSET);
      expect(second!.attributes[AGENT_CORE_ATTRIBUTES.runOutcome]).toBe("failed");
      expect(second!.status.message).toBe("the host gave up");
      expect(named(spans(), "execute_tool")).toHaveLength(1);
      otelRun({ ...otel }).end();
      expect(spans()).toHaveLength(3);
    });
  });
});

describe("the ./otel entry", () => {
  const root = resolve(import.meta.dirname, "..");
  const importsOf = async (entry: string) => {
    const result = await build({
      entryPoints: [resolve(root, entry)],
      bundle: true,
      write: false,
      metafile: true,
      platform: "node",
      format: "esm",
      packages: "external",
      logLevel: "silent",
    });
    return [...new Set(Object.values(result.metafile.outputs).flatMap((output) => output.imports.map((item) => item.path)))].sort();
  };

  it("is published with its own types and import paths, on @opentelemetry/api as an optional peer", () => {
    const manifest = JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as {
      exports: Record<string, unknown>;
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    expect(manifest.exports["./otel"]).toEqual({ types: "./dist/otel.d.ts", import: "./dist/otel.js" });
    expect(manifest.peerDependencies["@opentelemetry/api"]).toBeDefined();
    expect(manifest.peerDependenciesMeta["@opentelemetry/api"]?.optional).toBe(true);
    expect(Object.keys(manifest.dependencies).filter((name) => name.startsWith("@opentelemetry/"))).toEqual([]);
  });

  it("needs nothing at run time but the OpenTelemetry API, and the main entry never reaches it", async () => {
    expect(await importsOf("src/otel.ts")).toEqual(["@opentelemetry/api"]);
    expect((await importsOf("src/index.ts")).filter((path) => path.includes("opentelemetry"))).toEqual([]);
  });
});
