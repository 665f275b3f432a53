import { describe, expect, it } from "vitest";
import { PROFILE_NAMES, turn, type ProfileName } from "../support/endpoint.js";
import { endpointsClosedAfterEach, messages, post, json, events, chunks, deltas, type Chunk } from "../support/endpoint-client.js";

const start = endpointsClosedAfterEach();

describe("turn()", () => {
  it("streams role, reasoning, content, tool calls, finish and usage the OpenAI way", async () => {
    const server = await start({ profile: "openai" });
    server.script(
      turn({
        content: "hello world",
        reasoning: "think",
        toolCalls: [
          { name: "f", arguments: { a: 1 } },
          { name: "g", arguments: "{" },
        ],
        pieces: 2,
      }),
    );
    const list = await events(await post(server, { model: "m", stream: true, stream_options: { include_usage: true }, messages }));
    expect(list[list.length - 1]).toBe("[DONE]");
    const all = deltas(list);
    expect(all[0]).toEqual({ role: "assistant", content: "", refusal: null });
    expect(all.map((d) => d.content ?? "").join("")).toBe("hello world");
    expect(all.filter((d) => typeof d.content === "string" && d.content !== "")).toHaveLength(2);
    expect(all.map((d) => d.reasoning_content ?? "").join("")).toBe("think");
    const calls = all.flatMap((d) => (d.tool_calls as Array<{ index: number; id?: string; function: { name?: string; arguments: string } }>) ?? []);
    expect(calls.filter((c) => c.function.name).map((c) => [c.index, c.id, c.function.name])).toEqual([
      [0, "call_0", "f"],
      [1, "call_1", "g"],
    ]);
    expect(
      calls
        .filter((c) => c.index === 0)
        .map((c) => c.function.arguments)
        .join(""),
    ).toBe('{"a":1}');
    expect(
      calls
        .filter((c) => c.index === 1)
        .map((c) => c.function.arguments)
        .join(""),
    ).toBe("{");
    const finish = chunks(list).find((c) => c.choices[0]?.finish_reason);
    expect(finish?.choices[0]?.finish_reason).toBe("tool_calls");
    const usageChunk = list[list.length - 2] as Chunk;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage.prompt_tokens).toBe(server.requests[0]?.promptTokens);
    expect(usageChunk.usage.prompt_tokens_details.cached_tokens).toBe(0);
  });

  it("sends no usage unless include_usage asks for it, on OpenAI", async () => {
    const server = await start({ profile: "openai" });
    server.script(turn({ content: "x" }));
    const list = await events(await post(server, { model: "m", stream: true, messages }));
    expect(chunks(list).some((c) => "usage" in c)).toBe(false);
  });

  it("merges a usage override and honours usage: false and finishReason", async () => {
    const server = await start({ profile: "vllm" });
    server.script(
      turn({ content: "x", usage: { prompt_tokens: 7, completion_tokens: 2, reasoning_tokens: 1 }, finishReason: "length" }),
      turn({ content: "y", usage: false }),
    );
    const first = chunks(await events(await post(server, { model: "m", stream: true, messages })));
    const usage = first.find((c) => c.usage)?.usage;
    expect(usage).toEqual({ prompt_tokens: 7, completion_tokens: 2, total_tokens: 9, completion_tokens_details: { reasoning_tokens: 1 } });
    expect(first.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe("length");
    const second = chunks(await events(await post(server, { model: "m", stream: true, stream_options: { include_usage: true }, messages })));
    expect(second.some((c) => c.usage)).toBe(false);
  });

  it("answers a request that does not stream with one chat.completion object", async () => {
    const server = await start({ profile: "llama.cpp" });
    server.script(turn({ content: "done", reasoning: "r", toolCalls: [{ name: "g", arguments: "{}" }] }));
    const body = await json(await post(server, { model: "m", messages }));
    expect(body.object).toBe("chat.completion");
    expect(body.choices[0].message).toEqual({
      role: "assistant",
      content: "done",
      reasoning_content: "r",
      tool_calls: [{ id: expect.stringMatching(/^[A-Za-z0-9]{32}$/), type: "function", function: { name: "g", arguments: "{}" } }],
    });
    expect(body.choices[0].finish_reason).toBe("tool_calls");
    expect(body.usage.prompt_tokens).toBe(server.requests[0]?.promptTokens);
    expect(body.timings.prompt_n).toBe(body.usage.prompt_tokens);
  });

  const expectations: Record<ProfileName, { field: string; roleFirst: boolean; usage: [boolean, boolean]; timings: boolean; comment: boolean }> = {
    openai: { field: "reasoning_content", roleFirst: true, usage: [false, true], timings: false, comment: false },
    "llama.cpp": { field: "reasoning_content", roleFirst: true, usage: [false, true], timings: true, comment: false },
    vllm: { field: "reasoning", roleFirst: true, usage: [false, true], timings: false, comment: false },
    lmstudio: { field: "reasoning_content", roleFirst: false, usage: [false, false], timings: false, comment: false },
    ollama: { field: "reasoning", roleFirst: false, usage: [false, true], timings: false, comment: false },
    openrouter: { field: "reasoning", roleFirst: false, usage: [true, true], timings: false, comment: true },
    deepseek: { field: "reasoning_content", roleFirst: true, usage: [false, true], timings: false, comment: false },
  };

  for (const profile of PROFILE_NAMES) {
    it(`streams a turn the way ${profile} does`, async () => {
      const want = expectations[profile];
      const server = await start({ profile });
      server.script(turn({ content: "answer", reasoning: "because" }), turn({ content: "again" }));
      const bare = await events(await post(server, { model: "m", stream: true, messages }));
      const asked = await events(await post(server, { model: "m", stream: true, stream_options: { include_usage: true }, messages }));
      const all = deltas(bare);
      expect(all.map((d) => d[want.field] ?? "").join("")).toBe("because");
      expect(all.some((d) => (want.field === "reasoning" ? "reasoning_content" in d : "reasoning" in d))).toBe(false);
      const opening = all[0] ?? {};
      const contentFree = Object.keys(opening).every((key) => ["role", "content", "refusal"].includes(key)) && !opening.content;
      expect(contentFree).toBe(want.roleFirst);
      expect([chunks(bare).some((c) => c.usage), chunks(asked).some((c) => c.usage)]).toEqual(want.usage);
      expect(chunks(bare).some((c) => c.timings)).toBe(want.timings);
      expect(typeof bare[0] === "string" && (bare[0] as string).startsWith(":")).toBe(want.comment);
      if (want.timings) {
        const timings = chunks(asked)[chunks(asked).length - 1]?.timings;
        expect(Object.keys(timings).sort()).toEqual(
          [
            "cache_n",
            "predicted_ms",
            "predicted_n",
            "predicted_per_second",
            "predicted_per_token_ms",
            "prompt_ms",
            "prompt_n",
            "prompt_per_second",
            "prompt_per_token_ms",
          ].sort(),
        );
      }
    });
  }

  it("adds draft counts to llama.cpp timings when given", async () => {
    const server = await start({ profile: "llama.cpp" });
    server.script(turn({ content: "x", timings: { draft_n: 16, draft_n_accepted: 14 } }));
    const list = chunks(await events(await post(server, { model: "m", stream: true, messages })));
    expect(list[list.length - 1]?.timings).toMatchObject({ draft_n: 16, draft_n_accepted: 14 });
  });
});
