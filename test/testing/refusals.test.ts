import { describe, expect, it } from "vitest";
import { messageOf, turn, type EndpointOptions, type ProfileName } from "../support/endpoint.js";
import { endpointsClosedAfterEach, messages, post, json, events, tool } from "../support/endpoint-client.js";

const start = endpointsClosedAfterEach();

describe("refusing on its own", () => {
  const cases: Array<{
    name: string;
    profile: ProfileName;
    refuse: EndpointOptions["refuse"];
    body: Record<string, unknown>;
    drop: string;
    status: number;
    says: string;
  }> = [
    {
      name: "stream_options",
      profile: "openai",
      refuse: { streamOptions: true },
      body: { stream_options: { include_usage: true } },
      drop: "stream_options",
      status: 400,
      says: "stream_options",
    },
    { name: "tools", profile: "llama.cpp", refuse: { tools: true }, body: { tools: [tool] }, drop: "tools", status: 500, says: "--jinja" },
    {
      name: "tools on OpenRouter",
      profile: "openrouter",
      refuse: { tools: true },
      body: { tools: [tool] },
      drop: "tools",
      status: 404,
      says: "support tool use",
    },
    {
      name: "max_tokens",
      profile: "openai",
      refuse: { maxTokens: true },
      body: { max_tokens: 100 },
      drop: "max_tokens",
      status: 400,
      says: "max_completion_tokens",
    },
    {
      name: "temperature",
      profile: "openai",
      refuse: { temperature: true },
      body: { temperature: 0.2 },
      drop: "temperature",
      status: 400,
      says: "Only the default (1)",
    },
    {
      name: "an unknown field",
      profile: "openai",
      refuse: { fields: ["min_p"] },
      body: { min_p: 0.05 },
      drop: "min_p",
      status: 400,
      says: "Unrecognized request argument supplied: min_p",
    },
    {
      name: "an unknown field in the other wording",
      profile: "openai",
      refuse: { fields: ["min_p"], fieldWording: "unknown" },
      body: { min_p: 0.05 },
      drop: "min_p",
      status: 400,
      says: "Unknown parameter: 'min_p'.",
    },
    {
      name: "reasoning_effort as a parameter",
      profile: "openai",
      refuse: { reasoningEffort: true },
      body: { reasoning_effort: "low" },
      drop: "reasoning_effort",
      status: 400,
      says: "reasoning_effort",
    },
    {
      name: "response_format json_schema",
      profile: "openai",
      refuse: { responseFormat: true },
      body: { response_format: { type: "json_schema", json_schema: { name: "x", schema: {} } } },
      drop: "response_format",
      status: 400,
      says: "json_schema",
    },
    {
      name: "a trailing assistant message",
      profile: "llama.cpp",
      refuse: { prefill: true },
      body: { messages: [...messages, { role: "assistant", content: "half" }] },
      drop: "messages",
      status: 400,
      says: "prefill",
    },
  ];

  for (const c of cases) {
    it(`refuses ${c.name} in ${c.profile}'s words and answers the request re-sent without it`, async () => {
      const server = await start({ profile: c.profile, refuse: c.refuse });
      server.script(turn({ content: "ok" }));
      const first = { model: "m", messages, ...c.body };
      const refused = await post(server, first);
      expect(refused.status).toBe(c.status);
      expect(messageOf(await refused.text())).toContain(c.says);
      const second: Record<string, unknown> = { ...first };
      if (c.drop === "messages") second.messages = messages;
      else delete second[c.drop];
      const answered = await post(server, second);
      expect(answered.status).toBe(200);
      expect((await json(answered)).choices[0].message.content).toBe("ok");
      const bodies = server.chatBodies();
      expect(bodies).toHaveLength(2);
      expect(bodies[1]).toEqual(second);
      expect(server.chatRequests().map((r) => r.refused)).toEqual([expect.any(String), undefined]);
    });
  }

  it("refuses a reasoning_effort value and names the values the model takes", async () => {
    const server = await start({ refuse: { reasoningEffort: ["none"] } });
    const response = await post(server, { model: "gpt-5", messages, reasoning_effort: "none" });
    expect(response.status).toBe(400);
    expect(await json(response)).toEqual({
      error: {
        message: "Unsupported value: 'reasoning_effort' does not support 'none' with this model. Supported values are: 'minimal', 'low', 'medium', and 'high'.",
        type: "invalid_request_error",
        param: "reasoning_effort",
        code: "unsupported_value",
      },
    });
    server.script(turn({ content: "ok" }));
    expect((await post(server, { model: "gpt-5", messages, reasoning_effort: "minimal" })).status).toBe(200);
  });

  it("refuses a reasoning_effort only beside tools, in OpenAI's words, and takes it without them", async () => {
    const server = await start({ refuse: { reasoningEffortWithTools: true } });
    server.script(turn({ content: "ok" }), turn({ content: "ok" }), turn({ content: "ok" }));
    const refused = await post(server, { model: "gpt-5.4", messages, tools: [tool], reasoning_effort: "low" });
    expect(refused.status).toBe(400);
    expect(await json(refused)).toEqual({
      error: {
        message: "Function tools with reasoning_effort are not supported for gpt-5.4 in /v1/chat/completions. Please use /v1/responses instead.",
        type: "invalid_request_error",
        param: "reasoning_effort",
        code: null,
      },
    });
    expect((await post(server, { model: "gpt-5.4", messages, reasoning_effort: "low" })).status).toBe(200);
    expect((await post(server, { model: "gpt-5.4", messages, tools: [tool] })).status).toBe(200);
    expect((await post(server, { model: "gpt-5.4", messages, tools: [tool], reasoning_effort: "none" })).status).toBe(200);
    expect(server.chatRequests().map((r) => r.refused)).toEqual(["reasoningEffortWithTools", undefined, undefined, undefined]);
  });

  it("refuses every tool-carrying request but one at effort none, where the model reasons by default", async () => {
    const server = await start({ refuse: { reasoningEffortWithTools: "unless-none" } });
    server.script(turn({ content: "ok" }), turn({ content: "ok" }));
    const refused = await post(server, { model: "gpt-5.6", messages, tools: [tool] });
    expect(refused.status).toBe(400);
    expect(messageOf(await json(refused))).toBe(
      "Function tools with reasoning_effort are not supported for gpt-5.6 in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.",
    );
    expect((await post(server, { model: "gpt-5.6", messages, tools: [tool], reasoning_effort: "none" })).status).toBe(200);
    expect((await post(server, { model: "gpt-5.6", messages, reasoning_effort: "high" })).status).toBe(200);
  });

  it("refuses parallel_tool_calls only without tools, and takes it beside them", async () => {
    const server = await start({ refuse: { withoutTools: ["parallel_tool_calls"] } });
    server.script(turn({ content: "ok" }), turn({ content: "ok" }));
    const refused = await post(server, { model: "gpt-4o", messages, parallel_tool_calls: false });
    expect(refused.status).toBe(400);
    expect(await json(refused)).toEqual({
      error: {
        message: "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.",
        type: "invalid_request_error",
        param: "parallel_tool_calls",
        code: null,
      },
    });
    expect((await post(server, { model: "gpt-4o", messages, tools: [tool], parallel_tool_calls: false })).status).toBe(200);
    expect((await post(server, { model: "gpt-4o", messages })).status).toBe(200);
    expect(server.chatRequests().map((r) => r.refused)).toEqual(["parallelToolCallsWithoutTools", undefined, undefined]);
  });

  it("applies per-model rules to that model only", async () => {
    const server = await start({ refuse: { models: { "gpt-5": { maxTokens: true, temperature: true } } } });
    server.script(turn({ content: "ok" }));
    expect((await post(server, { model: "gpt-4o", messages, max_tokens: 5, temperature: 0.3 })).status).toBe(200);
    expect((await post(server, { model: "gpt-5", messages, max_tokens: 5 })).status).toBe(400);
    expect(server.chatRequests().map((r) => r.refused)).toEqual([undefined, "maxTokens"]);
  });

  it("refuses strict tool schemas and passes the relaxed ones", async () => {
    const server = await start({ refuse: { strict: true } });
    server.script(turn({ content: "ok" }));
    const strict = { ...tool, function: { ...tool.function, strict: true } };
    const refused = await post(server, { model: "m", messages, tools: [strict] });
    expect(refused.status).toBe(400);
    expect(messageOf(await refused.text())).toContain("Invalid schema for function 'read_file'");
    expect((await post(server, { model: "m", messages, tools: [tool] })).status).toBe(200);
  });

  it("refuses a schema the grammar converter cannot build, naming the part", async () => {
    const server = await start({ profile: "llama.cpp", refuse: { schemaGrammar: true } });
    const schema = { type: "object", properties: { a: { not: { type: "string" } } } };
    const response = await post(server, { model: "m", messages, response_format: { type: "json_schema", json_schema: { name: "x", schema } } });
    expect(response.status).toBe(400);
    expect(messageOf(await json(response))).toBe(
      'Unable to generate parser for this template. Automatic parser generation failed: JSON schema conversion failed:\nUnrecognized schema: {"not":{"type":"string"}}',
    );
  });

  it("refuses values rather than fields: a ceiling above the model's and a temperature out of range", async () => {
    const server = await start({ refuse: { maxOutputTokens: 4096, temperatureMax: 2, invalidSchema: true } });
    server.script(turn({ content: "ok" }));
    const ceiling = await post(server, { model: "m", messages, max_completion_tokens: 8192 });
    expect(messageOf(await json(ceiling))).toBe(
      "max_tokens is too large: 8192. This model supports at most 4096 completion tokens, whereas you provided 8192.",
    );
    const temperature = await post(server, { model: "m", messages, temperature: 3 });
    expect(messageOf(await json(temperature))).toContain("Expected a value <= 2, but got 3");
    const schema = await post(server, { model: "m", messages, response_format: { type: "json_schema", json_schema: { name: "x", schema: {} } } });
    expect(messageOf(await json(schema))).toContain("Invalid schema for response_format 'x'");
    expect((await post(server, { model: "m", messages, max_completion_tokens: 4096, temperature: 2 })).status).toBe(200);
    expect(server.chatRequests().map((r) => r.refused)).toEqual(["maxTokensValue", "temperatureValue", "invalidSchema", undefined]);
  });

  it("refuses an overflow in each family's words, weighing the ceiling where the family does", async () => {
    const long = [{ role: "user", content: "x".repeat(400) }];
    const overflowed = async (profile: ProfileName, extra: Record<string, unknown> = {}) => {
      const server = await start({ profile, contextWindow: 100, refuse: { contextOverflow: true }, respond: () => turn({ content: "ok" }) });
      const response = await post(server, { model: "m", messages: long, ...extra });
      return { status: response.status, message: messageOf(await response.text()), prompt: server.requests[0]!.promptTokens! };
    };
    expect((await overflowed("openai")).message).toMatch(/^This model's maximum context length is 100 tokens. However, your messages resulted in \d+ tokens/);
    expect((await overflowed("llama.cpp")).message).toMatch(/^request \(\d+ tokens\) exceeds the available context size \(100 tokens\), try increasing it$/);
    expect((await overflowed("vllm")).message).toContain("However, your request has");
    expect((await overflowed("lmstudio")).message).toMatch(/^Trying to keep the first \d+ tokens when context the overflows/);
    expect((await overflowed("openrouter")).message).toContain("middle-out");
    expect((await overflowed("ollama")).status).toBe(200);

    const small = [{ role: "user", content: "x".repeat(200) }];
    const server = await start({ profile: "openai", contextWindow: 100, refuse: { contextOverflow: true }, respond: () => turn({ content: "ok" }) });
    expect((await post(server, { model: "m", messages: small })).status).toBe(200);
    const withCeiling = await post(server, { model: "m", messages: small, max_tokens: 60 });
    expect(withCeiling.status).toBe(400);
    expect(messageOf(await withCeiling.text())).toContain("in the completion");
  });

  it("sends an overflow inside a 200 stream when told to", async () => {
    const server = await start({ profile: "llama.cpp", contextWindow: 10, refuse: { contextOverflow: true, overflowInStream: true } });
    const response = await post(server, { model: "m", stream: true, messages: [{ role: "user", content: "x".repeat(100) }] });
    expect(response.status).toBe(200);
    const list = await events(response);
    expect(list[0]).toMatchObject({ error: { type: "exceed_context_size_error", n_ctx: 10 } });
    expect(server.requests[0]?.refused).toBe("overflowInStream");
  });

  it("answers the 429 that borrows overflow's words past the per-minute limit", async () => {
    const server = await start({ refuse: { tokensPerMinute: 5 } });
    const response = await post(server, { model: "gpt-4o", messages: [{ role: "user", content: "x".repeat(100) }] });
    expect(response.status).toBe(429);
    expect(messageOf(await response.text())).toMatch(/^Request too large for gpt-4o in organization .* on tokens per min \(TPM\): Limit 5, Requested \d+/);
  });

  it("answers Groq's 413 past the per-minute limit when told to", async () => {
    const server = await start({ refuse: { tokensPerMinute: 5, tokensPerMinuteStatus: 413 } });
    const response = await post(server, { model: "llama-3.3-70b-versatile", messages: [{ role: "user", content: "x".repeat(100) }] });
    expect(response.status).toBe(413);
    expect(messageOf(await response.text())).toContain("please reduce your message size and try again");
  });

  it("words an effort refusal without a list when the model names none", async () => {
    const server = await start({ refuse: { reasoningEffort: ["none"], supportedEfforts: [] } });
    const response = await post(server, { model: "m", messages, reasoning_effort: "none" });
    expect(messageOf(await response.text())).toBe("Unsupported value: 'reasoning_effort' does not support 'none' with this model.");
  });

  it("answers 503 Loading model the given number of times, then the script", async () => {
    const server = await start({ profile: "llama.cpp", loading: 2 });
    server.script(turn({ content: "ok" }));
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const response = await post(server, { model: "m", messages });
      statuses.push(response.status);
      await response.text();
    }
    expect(statuses).toEqual([503, 503, 200]);
    expect(server.pending()).toBe(0);
  });

  it("reports Ollama's truncated prompt rather than refusing it", async () => {
    const server = await start({ profile: "ollama", contextWindow: 10, refuse: { contextOverflow: true } });
    server.script(turn({ content: "ok" }));
    const body = await json(await post(server, { model: "m", messages: [{ role: "user", content: "x".repeat(100) }] }));
    expect(body.usage.prompt_tokens).toBe(10);
  });
});
