import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createPromptCounter, renderMessage, renderRequest, turn } from "../support/endpoint.js";
import { endpointsClosedAfterEach, messages, post, json, tool } from "../support/endpoint-client.js";

const start = endpointsClosedAfterEach();

describe("prompt counting", () => {
  const request = {
    tools: [tool],
    messages: [
      { role: "system", content: "You are terse." },
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image_url", image_url: { url: "data:," } },
        ],
      },
      { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "read_file", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c", content: "contents" },
    ],
  };

  it("renders the tool block first and each message alone", () => {
    expect(renderMessage(request.messages[1])).toBe("<|user|>look<|image|><|end|>");
    expect(renderMessage(request.messages[2])).toBe(`<|assistant|>${JSON.stringify(request.messages[2]!.tool_calls)}<|end|>`);
    expect(renderRequest(request).startsWith(`<|tools|>${JSON.stringify([tool])}<|end|><|system|>You are terse.<|end|>`)).toBe(true);
  });

  it("reports chars4 as the rendered length over four, rounded up", async () => {
    const server = await start();
    server.script(turn({ content: "ok" }));
    const body = await json(await post(server, { model: "m", ...request }));
    expect(body.usage.prompt_tokens).toBe(Math.ceil(renderRequest(request).length / 4));
  });

  it("reports o200k as the sum of each piece's tokens", async () => {
    const counter = await createPromptCounter("o200k");
    const server = await start({ promptTokens: "o200k" });
    server.script(turn({ content: "ok" }));
    const body = await json(await post(server, { model: "m", ...request }));
    expect(body.usage.prompt_tokens).toBe(counter.countRequest(request));
    expect(body.usage.prompt_tokens).toBeLessThan(renderRequest(request).length);
  });

  it("charges appended messages exactly their own o200k counts", async () => {
    const counter = await createPromptCounter("o200k");
    const text = fc.string({ maxLength: 40 });
    const message = fc.record({ role: fc.constantFrom("user", "assistant", "tool", "system"), content: text });
    fc.assert(
      fc.property(fc.array(message, { maxLength: 5 }), fc.array(message, { minLength: 1, maxLength: 5 }), (before, appended) => {
        const base = counter.countRequest({ messages: before, tools: [tool] });
        const after = counter.countRequest({ messages: [...before, ...appended], tools: [tool] });
        const own = appended.reduce((sum, m) => sum + counter.countMessage(m), 0);
        expect(after - base).toBe(own);
      }),
      { numRuns: 60 },
    );
  });

  it("counts any request body without throwing", async () => {
    const counter = await createPromptCounter("o200k");
    const chars = await createPromptCounter();
    fc.assert(
      fc.property(fc.anything(), fc.anything(), (messages, tools) => {
        expect(counter.countRequest({ messages, tools })).toBeGreaterThanOrEqual(0);
        expect(chars.countRequest({ messages, tools })).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 100 },
    );
  });
});

describe("prefix cache", () => {
  it("reports the prefix shared with the previous request, in o200k tokens", async () => {
    const counter = await createPromptCounter("o200k");
    const server = await start({ profile: "llama.cpp", promptTokens: "o200k", prefixCache: true, respond: () => turn({ content: "ok" }) });
    const first = {
      model: "m",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "one" },
      ],
    };
    const second = { ...first, messages: [...first.messages, { role: "assistant", content: "ok" }, { role: "user", content: "two" }] };
    const third = { ...second, messages: [{ role: "system", content: "Be long." }, ...second.messages.slice(1)] };
    const cached: number[] = [];
    for (const body of [first, second, third]) {
      const answer = await json(await post(server, body));
      cached.push(answer.usage.prompt_tokens_details.cached_tokens);
      expect(answer.timings.cache_n).toBe(answer.usage.prompt_tokens_details.cached_tokens);
      expect(answer.timings.prompt_n).toBe(answer.usage.prompt_tokens - answer.timings.cache_n);
    }
    expect(cached[0]).toBe(0);
    expect(cached[1]).toBe(counter.countRequest(first));
    expect(cached[2]).toBe(counter.countCommonPrefix(second, third));
    expect(cached[2]).toBeLessThan(10);
    expect(server.requests.map((r) => r.cachedTokens)).toEqual(cached);
  });

  it("reports the shared prefix in characters over four, rounded down, by default", async () => {
    const server = await start({ profile: "vllm", prefixCache: true, respond: () => turn({ content: "ok" }) });
    const first = { model: "m", messages: [{ role: "user", content: "a".repeat(37) }] };
    const second = { model: "m", messages: [...first.messages, { role: "user", content: "b" }] };
    await (await post(server, first)).text();
    const answer = await json(await post(server, second));
    expect(answer.usage.prompt_tokens_details.cached_tokens).toBe(Math.floor(renderRequest(first).length / 4));
  });

  it("keeps the cache as it was across a refused request", async () => {
    const server = await start({ profile: "openai", prefixCache: true, refuse: { fields: ["min_p"] }, respond: () => turn({ content: "ok" }) });
    const first = { model: "m", messages: [{ role: "user", content: "a".repeat(40) }] };
    await (await post(server, first)).text();
    expect((await post(server, { model: "m", min_p: 0.1, messages: [{ role: "user", content: "zzz" }] })).status).toBe(400);
    const answer = await json(await post(server, first));
    expect(answer.usage.prompt_tokens_details.cached_tokens).toBe(Math.floor(renderRequest(first).length / 4));
    expect(server.requests[1]?.cachedTokens).toBeUndefined();
  });

  it("leaves cached_tokens out on families that only report it with caching on", async () => {
    const server = await start({ profile: "vllm", respond: () => turn({ content: "ok" }) });
    const answer = await json(await post(server, { model: "m", messages }));
    expect(answer.usage.prompt_tokens_details).toBeUndefined();
  });
});
