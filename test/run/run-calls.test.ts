import { describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import type { ToolCall, ToolMessage } from "../../src/shapes/config.js";
import { STOPPED_BEFORE_CALL, STOPPED_DURING_CALL, preview, readCalls, readToolResult, runCalls, type Dispatch } from "../../src/run/run-calls.js";
import type { ToolCallRequest, ToolCallResult } from "../../src/text/tool-calls.js";
import { validateTranscript } from "../support/transcript.js";

const call = (id: string, name: string, args: string): ToolCall => ({ id, type: "function", function: { name, arguments: args } });

/** A transcript of the assistant message and the step's results, for the validator. */
const transcript = (calls: ToolCall[], messages: ToolMessage[]) => [
  { role: "user", content: "go" },
  { role: "assistant", content: "", tool_calls: readCalls(calls).map((read) => read.call) },
  ...messages,
];

describe("readCalls", () => {
  it("keeps repaired arguments as JSON and hands dispatch the model's own text as raw", () => {
    const [read] = readCalls([call("a", "read", "{'path': 'x', 'all': True,}")]);
    expect(read!.call.function.arguments).toBe('{"path":"x","all":true}');
    expect(read!.request).toEqual({ id: "a", name: "read", args: { path: "x", all: true }, raw: "{'path': 'x', 'all': True,}" });
    expect(read!.error).toBeUndefined();
  });

  it("replays unreadable arguments as {} and says why, truncated at the ceiling", () => {
    const [cutOff] = readCalls([call("a", "write", '{"text": "abc')], { truncated: true });
    expect(cutOff!.call.function.arguments).toBe("{}");
    expect(cutOff!.request.args).toEqual({});
    expect(cutOff!.error?.kind).toBe("truncated");
    const [bad] = readCalls([call("b", "write", "[1, 2]")]);
    expect(bad!.error?.kind).toBe("malformed");
  });

  it("makes ids distinct within the step", () => {
    const reads = readCalls([call("", "a", "{}"), call("x", "b", "{}"), call("x", "c", "{}"), call("call_3", "d", "{}")]);
    const ids = reads.map((read) => read.call.id);
    expect(new Set(ids).size).toBe(4);
    expect(ids[1]).toBe("x");
  });
});

describe("runCalls", () => {
  it("answers every call in order, sequentially by default", async () => {
    const order: string[] = [];
    const dispatch: Dispatch = async ({ name }) => {
      order.push(name);
      return `${name} done`;
    };
    const calls = [call("1", "a", "{}"), call("2", "b", "{}")];
    const run = await runCalls(readCalls(calls), { dispatch });
    expect(run.messages).toEqual([
      { role: "tool", tool_call_id: "1", content: "a done" },
      { role: "tool", tool_call_id: "2", content: "b done" },
    ]);
    expect(order).toEqual(["a", "b"]);
    expect(run.used).toEqual(["a", "b"]);
    expect(run.failure).toBeUndefined();
  });

  it("gives the model the arguments error and never dispatches an unreadable call", async () => {
    let dispatched = 0;
    const seen: ToolCallRequest[] = [];
    const run = await runCalls(readCalls([call("1", "a", "not json")]), {
      dispatch: () => dispatched++,
      onToolCall: (request) => seen.push(request),
    });
    expect(dispatched).toBe(0);
    expect(run.outcomes[0]!.ok).toBe(false);
    expect(run.messages[0]!.content).toContain("not a JSON object");
    expect(seen[0]!.args).toEqual({});
  });

  it("makes an identical call once and hands the repeat its answer under its own id", async () => {
    let count = 0;
    const results: ToolCallResult[] = [];
    const run = await runCalls(readCalls([call("1", "read", "{'a': 1}"), call("2", "read", '{"a": 1}')]), {
      dispatch: () => `read #${++count}`,
      onToolResult: (result) => results.push(result),
    });
    expect(count).toBe(1);
    expect(run.messages.map((message) => message.content)).toEqual(["read #1", "read #1"]);
    expect(results.map((result) => result.id)).toEqual(["1", "2"]);
  });

  it("shares one request between identical calls in flight together", async () => {
    let count = 0;
    const run = await runCalls(readCalls([call("1", "read", "{}"), call("2", "read", "{}"), call("3", "read", '{"b":2}')]), {
      parallel: true,
      dispatch: async () => {
        count += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
        return `#${count}`;
      },
    });
    expect(count).toBe(2);
    expect(run.messages[0]!.content).toBe(run.messages[1]!.content);
  });

  it("forgets a call that threw, so asking again is a real retry", async () => {
    let count = 0;
    const run = await runCalls(readCalls([call("1", "flaky", "{}"), call("2", "flaky", "{}")]), {
      dispatch: () => {
        count += 1;
        if (count === 1) throw new Error("busy");
        return "ok";
      },
    });
    expect(count).toBe(2);
    expect(run.outcomes.map((outcome) => [outcome.ok, outcome.content])).toEqual([
      [false, "busy"],
      [true, "ok"],
    ]);
  });

  it("dispatches every call with dedupe off, and asks a predicate per call", async () => {
    let count = 0;
    const calls = [call("1", "send_email", "{}"), call("2", "send_email", "{}"), call("3", "read", "{}"), call("4", "read", "{}")];
    await runCalls(readCalls(calls), { dispatch: () => ++count, dedupe: false });
    expect(count).toBe(4);
    count = 0;
    await runCalls(readCalls(calls), { dispatch: () => ++count, dedupe: (request) => request.name !== "send_email" });
    expect(count).toBe(3);
  });

  it("writes results in call order however parallel calls land", async () => {
    const landed: string[] = [];
    const gates = new Map<string, () => void>();
    const running = runCalls(readCalls([call("1", "a", "{}"), call("2", "b", "{}"), call("3", "c", "{}")]), {
      parallel: true,
      dispatch: async ({ name }) => {
        await new Promise<void>((open) => gates.set(name, open));
        return name;
      },
      onToolResult: (result) => landed.push(result.name),
    });
    await vi.waitFor(() => expect(gates.size).toBe(3));
    // The calls land in the order b, c, a: each gate opens only once the one before has landed.
    for (const name of ["b", "c", "a"]) {
      const count = landed.length;
      gates.get(name)!();
      await vi.waitFor(() => expect(landed).toHaveLength(count + 1));
    }
    const run = await running;
    expect(landed).toEqual(["b", "c", "a"]);
    expect(run.messages.map((message) => message.tool_call_id)).toEqual(["1", "2", "3"]);
  });

  it("reads non-string results, MCP-shaped results and rejections that are not Errors", async () => {
    const values: unknown[] = [{ a: 1 }, { content: [{ type: "text", text: "boom" }], isError: true }, undefined, 42];
    const run = await runCalls(readCalls(values.map((_, index) => call(`${index}`, `t${index}`, "{}")).concat(call("r", "reject", "{}"))), {
      dispatch: ({ name }) => (name === "reject" ? Promise.reject({ error: { message: "pool gone" } }) : values[Number(name.slice(1))]),
    });
    expect(run.outcomes.map((outcome) => [outcome.ok, outcome.content])).toEqual([
      [true, '{"a":1}'],
      [false, "boom"],
      [true, ""],
      [true, "42"],
      [false, "pool gone"],
    ]);
  });

  it("cuts a huge result and says how much was left out", async () => {
    const run = await runCalls(readCalls([call("1", "dump", "{}")]), { dispatch: () => "x".repeat(5000), maxResultChars: 1000 });
    const content = run.messages[0]!.content as string;
    expect(content.startsWith("x".repeat(1000))).toBe(true);
    expect(content).toContain("4000 more characters");
  });

  it("answers a hung call and the calls after it when the run stops", async () => {
    const controller = new AbortController();
    const calls = [call("1", "quick", "{}"), call("2", "hang", "{}"), call("3", "never", "{}")];
    const run = await runCalls(readCalls(calls), {
      signal: controller.signal,
      dispatch: ({ name }) => {
        if (name === "hang") {
          setTimeout(() => controller.abort(new Error("stopped by host")), 5);
          return new Promise(() => undefined);
        }
        return "fine";
      },
    });
    expect(run.messages.map((message) => message.content)).toEqual(["fine", STOPPED_DURING_CALL, STOPPED_BEFORE_CALL]);
    expect((run.failure?.error as Error).message).toBe("stopped by host");
    expect(validateTranscript(transcript(calls, run.messages))).toEqual([]);
  });

  it("stops the step when onMessage throws, still answering every call", async () => {
    const heard: string[] = [];
    const calls = [call("1", "a", "{}"), call("2", "b", "{}")];
    const run = await runCalls(readCalls(calls), {
      dispatch: () => "ok",
      onMessage: (message) => {
        heard.push(message.content as string);
        if (heard.length === 1) throw new Error("disk full");
      },
    });
    expect(heard).toEqual(["ok", STOPPED_BEFORE_CALL]);
    expect((run.failure?.error as Error).message).toBe("disk full");
  });

  it("hands events previews of arguments and results under the call's id", async () => {
    const events: unknown[] = [];
    await runCalls(readCalls([call("7", "a", JSON.stringify({ text: "y".repeat(900) }))]), {
      dispatch: () => "z".repeat(900),
      onEvent: (event) => events.push(event),
      now: () => 0,
    });
    expect(events).toMatchObject([
      { kind: "tool-call", id: "7", name: "a" },
      { kind: "tool-result", id: "7", name: "a", ok: true, durationMs: 0 },
    ]);
    expect((events[1] as { content: string }).content).toMatch(/… \[900 chars\]$/);
  });

  it("tells onToolResult the whole text the model reads, while the event carries a preview", async () => {
    const events: Array<{ kind: string; content?: string }> = [];
    const told: ToolCallResult[] = [];
    const messages: ToolMessage[] = [];
    await runCalls(readCalls([call("9", "a", "{}")]), {
      dispatch: () => "z".repeat(900),
      onEvent: (event) => events.push(event as { kind: string; content?: string }),
      onToolResult: (result) => told.push(result),
      onMessage: (message) => {
        messages.push(message);
      },
    });
    expect(told).toEqual([{ id: "9", name: "a", ok: true, content: "z".repeat(900) }]);
    expect(told[0]!.content).toBe(messages[0]!.content);
    expect(events.find((event) => event.kind === "tool-result")!.content!.length).toBeLessThan(900);
  });

  it("leaves a valid transcript whatever the tools do", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            name: fc.constantFrom("a", "b", "c"),
            args: fc.constantFrom("{}", '{"x":1}', "junk", ""),
            fate: fc.constantFrom("ok", "throw", "reject", "object"),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        fc.boolean(),
        async (specs, parallel) => {
          const calls = specs.map((spec, index) => call(`c${index}`, spec.name, spec.args));
          const fates = new Map(specs.map((spec, index) => [`c${index}`, spec.fate]));
          const run = await runCalls(readCalls(calls), {
            parallel,
            dispatch: ({ id }) => {
              const fate = fates.get(id);
              if (fate === "throw") throw new Error("thrown");
              if (fate === "reject") return Promise.reject("rejected");
              if (fate === "object") return { nested: [1, 2] };
              return "fine";
            },
          });
          expect(validateTranscript(transcript(calls, run.messages))).toEqual([]);
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe("preview", () => {
  it("keeps short text and cuts long text saying how long it was", () => {
    expect(preview("short")).toBe("short");
    expect(preview("a".repeat(10), 4)).toBe("aaaa… [10 chars]");
    expect(preview({ a: 1 })).toBe('{"a":1}');
  });

  it("never throws", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(typeof preview(cyclic)).toBe("string");
    expect(typeof preview(undefined)).toBe("string");
  });
});

describe("readToolResult", () => {
  it("joins text parts and marks an MCP error result failed", () => {
    expect(
      readToolResult([
        { type: "text", text: "a" },
        { type: "text", text: "b" },
      ]),
    ).toEqual({ ok: true, content: "a\nb" });
    expect(readToolResult({ content: "x", isError: true })).toEqual({ ok: false, content: "x" });
  });
});

describe("runCalls' check", () => {
  const names = (ids: string[]) => ids.map((id) => call(id, `tool_${id}`, "{}"));

  for (const parallel of [false, true]) {
    it(`leaves a held call and every one after it open, the later ones still run${parallel ? ", together" : ""}`, async () => {
      const ran: string[] = [];
      const run = await runCalls(readCalls(names(["1", "2", "3", "4"])), {
        parallel,
        dispatch: ({ id }) => {
          ran.push(id);
          return `ran ${id}`;
        },
        check: ({ id }) => (id === "2" ? { kind: "hold" } : id === "4" ? { kind: "answer", ok: false, content: "denied" } : { kind: "run" }),
      });
      expect(ran.sort()).toEqual(["1", "3"]);
      expect(run.messages).toEqual([{ role: "tool", tool_call_id: "1", content: "ran 1" }]);
      expect(run.open.map((entry) => (entry.kind === "held" ? ["held", entry.request.id] : ["answered", entry.outcome.id, entry.outcome.content]))).toEqual([
        ["held", "2"],
        ["answered", "3", "ran 3"],
        ["answered", "4", "denied"],
      ]);
      expect(run.outcomes.map((entry) => entry.id)).toEqual(["1", "3", "4"]);
    });
  }

  it("answers a held call as not run once the step stops, so the transcript stays whole", async () => {
    const stop = new AbortController();
    const calls = names(["1", "2", "3"]);
    const run = await runCalls(readCalls(calls), {
      signal: stop.signal,
      dispatch: ({ id }) => {
        if (id === "3") stop.abort(new Error("stopped"));
        return `ran ${id}`;
      },
      check: ({ id }) => (id === "1" ? { kind: "hold" } : { kind: "run" }),
    });
    expect(run.failure).toBeDefined();
    expect(run.open).toEqual([]);
    expect(run.messages[0]).toEqual({ role: "tool", tool_call_id: "1", content: STOPPED_BEFORE_CALL });
    expect(validateTranscript(transcript(calls, run.messages))).toEqual([]);
  });

  it("answers a call whose check throws as failed, and tells nothing of calls announce: false says were told of", async () => {
    const told: string[] = [];
    const events: string[] = [];
    const run = await runCalls(readCalls(names(["1", "2"])), {
      announce: false,
      dispatch: () => "fine",
      check: ({ id }) => {
        if (id === "1") throw new Error("policy broke");
        return { kind: "run" };
      },
      onToolCall: (request) => told.push(request.id),
      onEvent: (event) => events.push(event.kind),
    });
    expect(run.messages.map((message) => message.content)).toEqual(["policy broke", "fine"]);
    expect(told).toEqual([]);
    expect(events).toEqual(["tool-result", "tool-result"]);
  });
});
