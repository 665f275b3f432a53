import { Agent, request as httpRequest } from "node:http";
import fc from "fast-check";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import {
  createPromptCounter,
  messageOf,
  PROFILE_NAMES,
  PROFILES,
  REFUSAL_KINDS,
  refusal,
  refusalWording,
  renderMessage,
  renderRequest,
  startEndpoint,
  turn,
  WORDING_SAMPLES,
  SAMPLE_ONLY_KINDS,
  type EndpointOptions,
  type EndpointServer,
  type ProfileName,
} from "../support/endpoint.js";

const servers: EndpointServer[] = [];

async function start(options: EndpointOptions = {}): Promise<EndpointServer> {
  const server = await startEndpoint(options);
  servers.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const messages = [{ role: "user", content: "hi" }];

function post(server: EndpointServer, body: unknown): Promise<Response> {
  return fetch(`${server.baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer k" },
    body: JSON.stringify(body),
  });
}

async function json(response: Response): Promise<any> {
  return (await response.json()) as unknown;
}

/** Reads an SSE body into its events: parsed data objects, "[DONE]", and raw blocks for the rest. */
async function events(response: Response): Promise<unknown[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((block) => block.length > 0)
    .map((block) => {
      if (!block.startsWith("data: ")) return block;
      const data = block.slice(6);
      return data === "[DONE]" ? data : (JSON.parse(data) as unknown);
    });
}

type Chunk = { choices: Array<{ delta: Record<string, unknown>; finish_reason: string | null }>; usage?: any; timings?: any };

function chunks(list: unknown[]): Chunk[] {
  return list.filter((e): e is Chunk => typeof e === "object" && e !== null && "choices" in e);
}

function deltas(list: unknown[]): Array<Record<string, unknown>> {
  return chunks(list).flatMap((e) => e.choices.map((c) => c.delta));
}

const tool = {
  type: "function",
  function: { name: "read_file", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } } } },
};

describe("scripted responses", () => {
  it("streams raw chunks as data lines, strings verbatim, and ends with [DONE]", async () => {
    const server = await start();
    server.script({ kind: "stream", chunks: [{ choices: [{ index: 0, delta: { content: "a" } }] }, ": comment"] });
    const response = await post(server, { model: "m", stream: true, messages });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(await events(response)).toEqual([{ choices: [{ index: 0, delta: { content: "a" } }] }, ": comment", "[DONE]"]);
  });

  it("spaces chunks out by delayMs and leaves [DONE] out when told", async () => {
    const server = await start();
    server.script({ kind: "stream", chunks: [{ x: 1 }, { x: 2 }], done: false, delayMs: 5 });
    expect(await events(await post(server, { model: "m", stream: true, messages }))).toEqual([{ x: 1 }, { x: 2 }]);
  });

  it("answers json and error scripts with their status, headers and body", async () => {
    const server = await start();
    server.script(
      { kind: "json", body: { ok: true } },
      { kind: "error", status: 502, body: "<html>Bad gateway</html>", headers: { "retry-after": "3" } },
      { kind: "error", status: 400, body: { error: { message: "no" } } },
    );
    expect(await json(await post(server, { model: "m", messages }))).toEqual({ ok: true });
    const html = await post(server, { model: "m", messages });
    expect(html.status).toBe(502);
    expect(html.headers.get("content-type")).toContain("text/html");
    expect(html.headers.get("retry-after")).toBe("3");
    expect(await html.text()).toBe("<html>Bad gateway</html>");
    const error = await post(server, { model: "m", messages });
    expect(error.status).toBe(400);
    expect(await json(error)).toEqual({ error: { message: "no" } });
  });

  it("answers 500 saying nothing was scripted when the queue is empty", async () => {
    const server = await start();
    const response = await post(server, { model: "m", messages });
    expect(response.status).toBe(500);
    expect(messageOf(await json(response))).toContain("no response scripted");
  });

  it("answers from the queue first, then from respond", async () => {
    const server = await start({ respond: (request) => turn({ content: `echo ${(request.body as { model: string }).model}` }) });
    server.script(turn({ content: "queued" }));
    expect(server.pending()).toBe(1);
    const first = await json(await post(server, { model: "m7", messages }));
    const second = await json(await post(server, { model: "m7", messages }));
    expect(first.choices[0].message.content).toBe("queued");
    expect(second.choices[0].message.content).toBe("echo m7");
    expect(server.pending()).toBe(0);
  });

  it("destroys the socket after the chunks of a drop script", async () => {
    const server = await start();
    server.script({ kind: "drop", afterChunks: [{ choices: [{ index: 0, delta: { content: "par" } }] }] });
    const response = await post(server, { model: "m", stream: true, messages });
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
  });

  it("stalls after the headers and chunks until the server closes", async () => {
    const server = await start();
    server.script({ kind: "stall", afterChunks: [{ choices: [{ index: 0, delta: { role: "assistant" } }] }] });
    const response = await post(server, { model: "m", stream: true, messages });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain("assistant");
    const next = reader.read();
    await server.close();
    await expect(next).rejects.toThrow();
  });

  it("can stall before sending any headers", async () => {
    const server = await start();
    server.script({ kind: "stall", beforeHeaders: true });
    const pending = post(server, { model: "m", stream: true, messages });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await server.close();
    await expect(pending).rejects.toThrow();
  });

  it("folds raw stream chunks into one completion for a request that does not stream", async () => {
    const server = await start();
    server.script({
      kind: "stream",
      chunks: [
        { id: "x", choices: [{ index: 0, delta: { role: "assistant", content: "he" } }] },
        { choices: [{ index: 0, delta: { content: "llo", reasoning_content: "r" } }] },
        { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "c", function: { name: "f", arguments: "{" } }] } }] },
        { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: "}" } }] }, finish_reason: "tool_calls" }] },
        { choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
      ],
    });
    const body = await json(await post(server, { model: "m", messages }));
    expect(body.object).toBe("chat.completion");
    expect(body.choices[0].message).toEqual({
      role: "assistant",
      content: "hello",
      reasoning_content: "r",
      tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }],
    });
    expect(body.choices[0].finish_reason).toBe("tool_calls");
    expect(body.usage.total_tokens).toBe(5);
  });

  it("answers an in-stream error as a plain error to a request that does not stream", async () => {
    const server = await start({ profile: "llama.cpp" });
    server.script(refusal("llama.cpp", "overflowInStream", { promptTokens: 9000, window: 8192 }));
    const response = await post(server, { model: "m", messages });
    expect(response.status).toBe(400);
    expect(await json(response)).toMatchObject({ error: { type: "exceed_context_size_error", n_ctx: 8192 } });
  });

  it("overrides other routes, for a listing that stalls or fails", async () => {
    const server = await start({
      routes: { "GET /v1/models": { kind: "error", status: 503, body: { error: "busy" } }, "GET /props": { kind: "stall", beforeHeaders: true } },
    });
    expect((await fetch(`${server.baseUrl}/models`)).status).toBe(503);
    const props = fetch(`${server.origin}/props`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await server.close();
    await expect(props).rejects.toThrow();
  });
});

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

describe("recording", () => {
  it("records method, path, headers, parsed body and time of every request", async () => {
    let clock = 1000;
    const server = await start({ now: () => clock++ });
    server.script(turn({ content: "a" }));
    await (await post(server, { model: "m", stream: true, messages })).text();
    await (await fetch(`${server.baseUrl}/models`)).text();
    await (await fetch(`${server.origin}/raw?x=1`, { method: "POST", body: "not json" })).text();
    expect(server.requests.map((r) => [r.method, r.path, r.at])).toEqual([
      ["POST", "/v1/chat/completions", 1000],
      ["GET", "/v1/models", 1001],
      ["POST", "/raw", 1002],
    ]);
    expect(server.requests[0]?.headers.authorization).toBe("Bearer k");
    expect(server.requests[1]?.body).toBe("");
    expect(server.requests[2]?.body).toBe("not json");
    expect(server.chatBodies()).toEqual([{ model: "m", stream: true, messages }]);
    expect(server.chatRequests()).toHaveLength(1);
  });
});

describe("routes", () => {
  it("lists models the OpenAI way by default", async () => {
    const server = await start();
    const body = await json(await fetch(`${server.baseUrl}/models`));
    expect(body).toEqual({ object: "list", data: [{ id: "loopback-model", object: "model", created: 1_700_000_000, owned_by: "system" }] });
  });

  it("puts each family's window where that family puts it", async () => {
    const window = 16_384;
    const listing = async (profile: ProfileName) => {
      const server = await start({ profile, contextWindow: window, models: [{ id: "m" }] });
      return json(await fetch(`${server.baseUrl}/models`));
    };
    expect((await listing("vllm")).data[0].max_model_len).toBe(window);
    expect((await listing("openrouter")).data[0].context_length).toBe(window);
    const llama = (await listing("llama.cpp")).data[0];
    expect(llama.meta.n_ctx_train).toBeGreaterThan(window);
    expect(JSON.stringify((await listing("lmstudio")).data[0])).not.toMatch(/context/);
    expect(JSON.stringify((await listing("ollama")).data[0])).not.toMatch(/context|n_ctx|max_model_len/);
    expect(JSON.stringify((await listing("openai")).data[0])).not.toMatch(/context|n_ctx|max_model_len/);
  });

  it("serves llama.cpp's /props with the served window and 404s the LM Studio route", async () => {
    const server = await start({ profile: "llama.cpp", contextWindow: 8192 });
    const props = await json(await fetch(`${server.origin}/props`));
    expect(props.default_generation_settings.n_ctx).toBe(8192);
    const missing = await fetch(`${server.origin}/api/v0/models`);
    expect(missing.status).toBe(404);
    expect(await json(missing)).toEqual({ error: { code: 404, message: "File Not Found", type: "not_found_error" } });
  });

  it("lists llama.cpp models with meta null while loading, and answers /props null with 404", async () => {
    const server = await start({ profile: "llama.cpp", listingWhileLoading: true, props: null });
    expect((await json(await fetch(`${server.baseUrl}/models`))).data[0].meta).toBeNull();
    expect((await fetch(`${server.origin}/props`)).status).toBe(404);
  });

  it("serves LM Studio's /api/v0/models with the loaded window and answers unknown routes 200", async () => {
    const server = await start({ profile: "lmstudio", contextWindow: 4096, models: [{ id: "qwen" }] });
    const native = await json(await fetch(`${server.origin}/api/v0/models`));
    expect(native.data[0]).toMatchObject({ id: "qwen", loaded_context_length: 4096, state: "loaded" });
    const props = await fetch(`${server.origin}/props`);
    expect(props.status).toBe(200);
    expect(await json(props)).toEqual({ error: "Unexpected endpoint or method. (GET /props)" });
  });

  it("answers Ollama's unknown routes with gin's plain 404", async () => {
    const server = await start({ profile: "ollama" });
    for (const path of ["/props", "/api/v0/models"]) {
      const response = await fetch(`${server.origin}${path}`);
      expect(response.status).toBe(404);
      expect(await response.text()).toBe("404 page not found");
    }
  });

  it("answers each family's unknown route in its own shape", async () => {
    const expected: Record<ProfileName, number> = { openai: 404, "llama.cpp": 404, vllm: 404, lmstudio: 200, ollama: 404, openrouter: 404, deepseek: 404 };
    for (const profile of PROFILE_NAMES) {
      const server = await start({ profile });
      const response = await fetch(`${server.origin}/nowhere`);
      expect(response.status, profile).toBe(expected[profile]);
      expect(messageOf(await response.text()), profile).not.toBe("");
    }
  });

  it("merges given listing fields over the family's defaults", async () => {
    const server = await start({
      profile: "vllm",
      models: [
        { id: "a", max_model_len: 999 },
        { id: "b", extra: true },
      ],
    });
    const data = (await json(await fetch(`${server.baseUrl}/models`))).data;
    expect(data.map((m: any) => [m.id, m.max_model_len, m.extra])).toEqual([
      ["a", 999, undefined],
      ["b", 32_768, true],
    ]);
  });
});

describe("refusal wordings", () => {
  it("gives every family a status, a message and a source for every refusal kind", () => {
    for (const profile of PROFILE_NAMES) {
      for (const kind of REFUSAL_KINDS) {
        const wording = refusalWording(PROFILES[profile], kind);
        expect(wording.source.length, `${profile} ${kind}`).toBeGreaterThan(10);
        expect(messageOf(wording.body({ model: "m" })).length, `${profile} ${kind}`).toBeGreaterThan(3);
        expect([200, 400, 404, 413, 429, 500, 503]).toContain(wording.status);
      }
    }
  });

  it("keeps the exact wordings the specification quotes", () => {
    const message = (profile: ProfileName, kind: (typeof REFUSAL_KINDS)[number], detail: object = {}) =>
      messageOf(refusalWording(PROFILES[profile], kind).body({ model: "gpt-4o", ...detail }));
    expect(message("openai", "reasoningEffort", { value: "none" })).toBe(
      "Unsupported value: 'reasoning_effort' does not support 'none' with this model. Supported values are: 'minimal', 'low', 'medium', and 'high'.",
    );
    expect(message("openai", "unknownField", { field: "min_p" })).toBe("Unrecognized request argument supplied: min_p");
    expect(message("openai", "unknownParameter", { field: "min_p" })).toBe("Unknown parameter: 'min_p'.");
    expect(message("llama.cpp", "tools")).toBe("tools param requires --jinja flag");
    expect(message("llama.cpp", "contextOverflow")).toContain("exceeds the available context size");
    expect(message("vllm", "contextOverflow", { promptTokens: 9000, window: 8192 })).toContain("maximum context length");
    expect(message("openrouter", "tools")).toContain("No endpoints found that support tool use");
    expect(message("openai", "rateLimitTokens")).toMatch(/^Request too large for gpt-4o .* on tokens per min \(TPM\)/);
    expect(refusalWording(PROFILES["llama.cpp"], "loading").body({ model: "m" })).toEqual({
      error: { code: 503, message: "Loading model", type: "unavailable_error" },
    });
    expect(refusalWording(PROFILES["llama.cpp"], "tools").status).toBe(500);
    expect(refusalWording(PROFILES.openrouter, "tools").status).toBe(404);
    expect(refusalWording(PROFILES.openai, "requestTooLarge").status).toBe(413);
    expect(refusalWording(PROFILES.openai, "rateLimitTokens").status).toBe(429);
  });

  it("keeps every extra real-world sample readable, with a kind and a public source", () => {
    expect(WORDING_SAMPLES.length).toBeGreaterThan(15);
    for (const sample of WORDING_SAMPLES) {
      expect([...REFUSAL_KINDS, ...SAMPLE_ONLY_KINDS]).toContain(sample.kind);
      expect(["overflow", "loading", "transient", "none"]).toContain(sample.expected);
      expect(messageOf(sample.body).length, sample.source).toBeGreaterThan(10);
      // A public thread, a provider's own documentation page, or a repository path.
      expect(sample.source).toMatch(/^(https:\/\/[a-z.-]+\.[a-z]+\/|[a-z-]+\/[a-z.-]+ )/);
    }
    for (const profile of PROFILE_NAMES) {
      for (const kind of REFUSAL_KINDS) {
        const wording = PROFILES[profile].refusals[kind];
        if (wording && !wording.invented) expect(wording.source, `${profile} ${kind}`).toMatch(/https:\/\/github\.com\/|\.(cpp|hpp|py|go)\b/);
      }
    }
  });

  it("marks a stand-in wording as invented and keeps the family's body shape", () => {
    const stand = refusalWording(PROFILES.lmstudio, "maxTokens");
    expect(stand.invented).toBe(true);
    expect(typeof (stand.body({ model: "m" }) as { error: unknown }).error).toBe("string");
    expect(refusalWording(PROFILES.openai, "maxTokens").invented).toBeUndefined();
  });

  it("builds an error Scripted for refusal(), and a 200 stream for an overflow inside one", async () => {
    const answer = refusal("openai", "unknownField", "min_p");
    expect(answer).toMatchObject({ kind: "error", status: 400, refusal: "unknownField" });
    const server = await start({ profile: "llama.cpp" });
    server.script(refusal("llama.cpp", "overflowInStream", { promptTokens: 9000, window: 8192 }));
    const response = await post(server, { model: "m", stream: true, messages });
    expect(response.status).toBe(200);
    const list = await events(response);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ error: { code: 400, type: "exceed_context_size_error", n_prompt_tokens: 9000, n_ctx: 8192 } });
  });
});

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

describe("a prefilled reply (llama.cpp)", () => {
  const prefilled = [...messages, { role: "assistant", content: "Paris is" }];
  const contents = (list: unknown[]): string[] =>
    list.flatMap((event) => {
      const content = (event as { choices?: { delta?: { content?: unknown } }[] }).choices?.[0]?.delta?.content;
      return typeof content === "string" && content !== "" ? [content] : [];
    });

  it("streams the whole prefill back in the first content delta, before the new text", async () => {
    const server = await start({ profile: "llama.cpp" });
    server.script(turn({ content: " the capital", pieces: 2 }));
    const list = await events(await post(server, { model: "m", stream: true, messages: prefilled }));
    expect(contents(list)).toEqual(["Paris is the c", "apital"]);
  });

  it("streams the prefill alone where the model writes nothing more", async () => {
    const server = await start({ profile: "llama.cpp" });
    server.script(turn({ content: "" }));
    const list = await events(await post(server, { model: "m", stream: true, messages: prefilled }));
    expect(contents(list)).toEqual(["Paris is"]);
  });

  it("streams only the new text under continue_final_message with add_generation_prompt false", async () => {
    const server = await start({ profile: "llama.cpp" });
    server.script(turn({ content: " the capital", pieces: 2 }));
    const list = await events(
      await post(server, { model: "m", stream: true, messages: prefilled, continue_final_message: true, add_generation_prompt: false }),
    );
    expect(contents(list)).toEqual([" the c", "apital"]);
  });

  it("holds the prefill and the new text in a reply that is not streamed, counting only the new text", async () => {
    const server = await start({ profile: "llama.cpp" });
    server.script(turn({ content: " the capital" }), turn({ content: " the capital" }));
    const plain = await json(await post(server, { model: "m", messages: [...messages] }));
    const body = await json(await post(server, { model: "m", messages: prefilled, continue_final_message: true, add_generation_prompt: false }));
    expect(body.choices[0].message.content).toBe("Paris is the capital");
    expect(body.usage.completion_tokens).toBe(plain.usage.completion_tokens);
  });

  it("refuses continue_final_message beside add_generation_prompt true, as llama.cpp words it", async () => {
    const server = await start({ profile: "llama.cpp" });
    const response = await post(server, { model: "m", messages: prefilled, continue_final_message: true });
    expect(response.status).toBe(400);
    expect(await json(response)).toEqual({
      error: { code: 400, message: "Cannot set both add_generation_prompt and continue_final_message to true.", type: "invalid_request_error" },
    });
  });

  it("leaves other families' replies as scripted", async () => {
    const server = await start({ profile: "vllm" });
    server.script(turn({ content: " the capital", pieces: 1 }));
    const list = await events(await post(server, { model: "m", stream: true, messages: prefilled, continue_final_message: true }));
    expect(contents(list)).toEqual([" the capital"]);
  });
});

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

describe("close()", () => {
  it("destroys a keep-alive socket left open by a client", async () => {
    const server = await start();
    const agent = new Agent({ keepAlive: true });
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${server.baseUrl}/models`, { agent }, (res) => {
        res.resume();
        res.on("end", resolve);
      });
      req.on("error", reject);
      req.end();
    });
    await server.close();
    agent.destroy();
  });

  it("clears the timers of a delayed stream", async () => {
    const server = await start();
    server.script({ kind: "stream", chunks: [{ a: 1 }, { a: 2 }], delayMs: 60_000 });
    const response = await post(server, { model: "m", stream: true, messages });
    const reading = response.text().catch(() => "closed");
    await server.close();
    await reading;
  });

  it("closes a stalled stream's socket", async () => {
    const server = await start();
    server.script({ kind: "stall" });
    const response = await post(server, { model: "m", stream: true, messages });
    const reading = response.text();
    await server.close();
    await expect(reading).rejects.toThrow();
  });

  it("is safe to call twice", async () => {
    const server = await start();
    await server.close();
    await server.close();
  });
});

describe("the openai SDK against the endpoint", () => {
  for (const profile of PROFILE_NAMES) {
    it(`reads a ${profile} stream and a ${profile} refusal`, async () => {
      const server = await start({ profile, refuse: { fields: ["min_p"] } });
      const client = new OpenAI({ baseURL: server.baseUrl, apiKey: "k", maxRetries: 0 });
      server.script(turn({ content: "hello there", toolCalls: [{ name: "f", arguments: { a: 1 } }] }));
      const stream = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true });
      let content = "";
      let args = "";
      for await (const chunk of stream) {
        content += chunk.choices[0]?.delta.content ?? "";
        args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? "";
      }
      expect([content, args]).toEqual(["hello there", '{"a":1}']);
      const refused = await client.chat.completions
        .create({ model: "m", messages: [{ role: "user", content: "hi" }], min_p: 0.1 } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.APIError);
      expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(refusalWording(PROFILES[profile], "unknownField").status);
    });
  }
});
