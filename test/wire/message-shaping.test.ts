import { describe, expect, it } from "vitest";
import fc from "fast-check";
import "../support/fast-check-seed.js";
import type { Message } from "../../src/shapes/config.js";
import {
  applyShaping,
  decideShapingRefusal,
  describeToolsInPrompt,
  foldSystemMessages,
  importShaping,
  readShapingRefusal,
  rewriteToolCallIds,
  shapingSnapshotOf,
} from "../../src/wire/message-shaping.js";
import { recoverToolCalls } from "../../src/text/tool-calls.js";
import { PROFILES, WORDING_SAMPLES, messageOf, refusalWording } from "../support/endpoint.js";

const call = (id: string, name = "read", args = '{"path":"a"}') => ({ id, type: "function" as const, function: { name, arguments: args } });

describe("readShapingRefusal", () => {
  it("reads every recorded wording of its three refusals, and no other sample", () => {
    expect(readShapingRefusal(messageOf(refusalWording(PROFILES["llama.cpp"], "systemNotFirst").body({ model: "m" })))).toEqual({ kind: "system-first" });
    expect(readShapingRefusal(messageOf(refusalWording(PROFILES.vllm, "systemNotFirst").body({ model: "m" })))).toEqual({ kind: "system-first" });
    expect(readShapingRefusal(messageOf(refusalWording(PROFILES.openai, "toolCallId").body({ model: "m", value: "call_0" })))).toEqual({
      kind: "id-rule",
      length: 9,
    });
    for (const profile of ["llama.cpp", "vllm", "ollama", "openrouter", "openai"] as const) {
      expect(readShapingRefusal(messageOf(refusalWording(PROFILES[profile], "tools").body({ model: "m" }))), profile).toEqual({ kind: "tools" });
    }
    for (const sample of WORDING_SAMPLES) {
      const reading = readShapingRefusal(messageOf(sample.body));
      if (sample.kind === "systemNotFirst") expect(reading).toEqual({ kind: "system-first" });
      else if (sample.kind === "toolCallId") expect(reading).toEqual({ kind: "id-rule", length: 9 });
      else if (sample.kind !== "tools") expect(reading, sample.source).toBeUndefined();
    }
  });
});

describe("foldSystemMessages", () => {
  it("folds every system message into one at the top, in order, dropping no text", () => {
    const messages: Message[] = [
      { role: "system", content: "A." },
      { role: "user", content: "q" },
      { role: "system", content: [{ type: "text", text: "B." }] },
    ];
    expect(foldSystemMessages(messages)).toEqual([
      { role: "system", content: "A.\n\nB." },
      { role: "user", content: "q" },
    ]);
  });

  it("keeps every system text and every other message in order, for any transcript", () => {
    const message = fc.oneof(
      fc.record({ role: fc.constant("system" as const), content: fc.string({ minLength: 1 }) }),
      fc.record({ role: fc.constant("user" as const), content: fc.string() }),
    );
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), (messages) => {
        const folded = foldSystemMessages(messages);
        expect(folded.filter((entry) => entry.role === "system").length).toBeLessThanOrEqual(1);
        expect(folded.filter((entry) => entry.role !== "system")).toEqual(messages.filter((entry) => entry.role !== "system"));
        const joined = folded.find((entry) => entry.role === "system")?.content ?? "";
        for (const entry of messages) if (entry.role === "system") expect(joined).toContain(entry.content);
      }),
    );
  });
});

describe("rewriteToolCallIds", () => {
  it("rewrites ids to nine letters and digits, the same on the call and its answer, and leaves valid ids alone", () => {
    const messages: Message[] = [
      { role: "assistant", content: "", tool_calls: [call("call_PTLP8xhu3uwZk4l3nlnrrJha"), call("abcDEF123")] },
      { role: "tool", tool_call_id: "call_PTLP8xhu3uwZk4l3nlnrrJha", content: "x" },
      { role: "tool", tool_call_id: "abcDEF123", content: "y" },
    ];
    const out = rewriteToolCallIds(messages, 9);
    const ids = (out[0] as { tool_calls: Array<{ id: string }> }).tool_calls.map((entry) => entry.id);
    expect(ids[0]).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(ids[1]).toBe("abcDEF123");
    expect((out[1] as { tool_call_id: string }).tool_call_id).toBe(ids[0]);
    expect(rewriteToolCallIds(messages, 9)).toEqual(out);
    expect((messages[0] as { tool_calls: Array<{ id: string }> }).tool_calls[0]!.id).toBe("call_PTLP8xhu3uwZk4l3nlnrrJha");
  });

  it("never maps two ids to one, for any ids", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 12 }), (ids) => {
        const out = rewriteToolCallIds([{ role: "assistant", content: "", tool_calls: ids.map((id) => call(id)) }], 9);
        const sent = (out[0] as { tool_calls: Array<{ id: string }> }).tool_calls.map((entry) => entry.id);
        expect(new Set(sent).size).toBe(ids.length);
        for (const id of sent) expect(id).toMatch(/^[A-Za-z0-9]{9}$/);
      }),
    );
  });
});

describe("describeToolsInPrompt", () => {
  it("writes earlier calls in a markup recoverToolCalls reads back, and results as user text", () => {
    const messages: Message[] = [
      { role: "system", content: "Rules." },
      { role: "user", content: "q" },
      { role: "assistant", content: "Looking.", tool_calls: [call("c1")] },
      { role: "tool", tool_call_id: "c1", content: "notes" },
    ];
    const tools = [{ type: "function" as const, function: { name: "read", description: "Reads.", parameters: { type: "object" } } }];
    const out = describeToolsInPrompt(messages, tools);
    expect(String(out[0]!.content)).toContain('"name":"read"');
    expect(out.some((message) => message.role === "tool")).toBe(false);
    const recovered = recoverToolCalls(String(out[2]!.content), ["read"]);
    expect(recovered.calls.map((entry) => [entry.function.name, JSON.parse(entry.function.arguments)])).toEqual([["read", { path: "a" }]]);
    expect(out[3]).toEqual({ role: "user", content: "<tool_response>\nnotes\n</tool_response>" });
  });

  it("is applied only where the model latched it and tools are declared", () => {
    const tools = [{ type: "function" as const, function: { name: "read" } }];
    const messages: Message[] = [{ role: "user", content: "q" }];
    expect(applyShaping(messages, { toolsInPrompt: true }, { tools }).toolsInPrompt).toBe(true);
    expect(applyShaping(messages, { toolsInPrompt: true }, { tools, toolsInPrompt: false }).toolsInPrompt).toBe(false);
    expect(applyShaping(messages, {}, { tools }).toolsInPrompt).toBe(false);
  });
});

describe("decideShapingRefusal", () => {
  const systemWords = "Jinja Exception: System message must be at the beginning.";
  it("stops where the request had one system message, first, and latches otherwise", () => {
    const one = {
      messages: [
        { role: "system", content: "a" },
        { role: "user", content: "q" },
      ],
    };
    expect(decideShapingRefusal(systemWords, {}, "m", one)?.kind).toBe("stuck");
    const two = {
      messages: [
        { role: "system", content: "a" },
        { role: "system", content: "b" },
      ],
    };
    const decision = decideShapingRefusal(systemWords, {}, "m", two);
    expect(decision?.kind).toBe("answer");
  });

  it("answers a refusal of tools only where the caller allows the prompt fallback and the request declared tools", () => {
    const words = "tools param requires --jinja flag";
    const sent = { tools: [{ type: "function" }] };
    expect(decideShapingRefusal(words, {}, "m", sent)).toBeUndefined();
    expect(decideShapingRefusal(words, {}, "m", sent, { toolsInPrompt: true })?.kind).toBe("answer");
    expect(decideShapingRefusal(words, {}, "m", { messages: [] }, { toolsInPrompt: true })).toBeUndefined();
  });

  it("stores and imports its latches, noting what it does not understand", () => {
    const stored = shapingSnapshotOf({ foldSystem: true, toolCallIdLength: 9, toolsInPrompt: true, droppedMessageFields: ["extra_content"] });
    expect(stored).toEqual({ foldSystem: true, toolCallIdLength: 9, toolsInPrompt: true, droppedMessageFields: ["extra_content"] });
    const record: Record<string, unknown> = {};
    const ignored: string[] = [];
    importShaping(record, { ...stored, toolCallIdLength: 2.5, foldSystem: "yes", droppedMessageFields: ["ok", 3] }, "m", ignored);
    expect(record).toEqual({ toolsInPrompt: true, droppedMessageFields: ["ok"] });
    expect(ignored).toHaveLength(3);
  });
});
