import { request as httpRequest, Agent } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { refusal, startEndpoint, turn, type EndpointServer, type EndpointOptions } from "./support/endpoint.js";

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

/** Reads an SSE body into its data payloads: parsed objects, "[DONE]", and raw lines for the rest. */
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

function deltas(list: unknown[]): Array<Record<string, unknown>> {
  return list
    .filter((e): e is { choices: Array<{ delta: Record<string, unknown> }> } => typeof e === "object" && e !== null && "choices" in e)
    .flatMap((e) => e.choices.map((c) => c.delta));
}

describe("scripted responses", () => {
  it("streams raw chunks as data lines and ends with [DONE]", async () => {
    const server = await start();
    server.script({ kind: "stream", chunks: [{ choices: [{ index: 0, delta: { content: "a" } }] }, ": comment"] });
    const response = await post(server, { model: "m", stream: true, messages });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(await events(response)).toEqual([{ choices: [{ index: 0, delta: { content: "a" } }] }, ": comment", "[DONE]"]);
  });

  it("leaves [DONE] out when the script says so", async () => {
    const server = await start();
    server.script({ kind: "stream", chunks: [{ x: 1 }], done: false, delayMs: 5 });
    const response = await post(server, { model: "m", stream: true, messages });
    expect(await events(response)).toEqual([{ x: 1 }]);
  });

  it("answers json and error scripts with their status and body", async () => {
    const server = await start();
    server.script(
      { kind: "json", body: { ok: true } },
      { kind: "error", status: 502, body: "<html>Bad gateway</html>", headers: { "retry-after": "3" } },
    );
    const first = await post(server, { model: "m", messages });
    expect(await first.json()).toEqual({ ok: true });
    const second = await post(server, { model: "m", messages });
    expect(second.status).toBe(502);
    expect(second.headers.get("content-type")).toContain("text/html");
    expect(second.headers.get("retry-after")).toBe("3");
    expect(await second.text()).toBe("<html>Bad gateway</html>");
  });

  it("answers 500 saying nothing was scripted when the queue is empty", async () => {
    const server = await start();
    const response = await post(server, { model: "m", messages });
    expect(response.status).toBe(500);
    expect(JSON.stringify(await response.json())).toContain("no response scripted");
  });

  it("falls back to respond when the queue is empty", async () => {
    const server = await start({ respond: (request) => turn({ content: `echo ${(request.body as { model: string }).model}` }) });
    const response = await post(server, { model: "m7", messages });
    const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]?.message.content).toBe("echo m7");
  });

  it("drops the socket after the chunks of a drop script", async () => {
    const server = await start();
    server.script({ kind: "drop", afterChunks: [{ choices: [{ index: 0, delta: { content: "par" } }] }] });
    const response = await post(server, { model: "m", stream: true, messages });
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
});

describe("turn()", () => {
  it("streams role, reasoning, content, tool calls, finish and usage the openai way", async () => {
    const server = await start({ profile: "openai" });
    server.script(turn({ content: "hello world", reasoning: "think", toolCalls: [{ name: "f", arguments: { a: 1 } }], pieces: 2 }));
    const response = await post(server, { model: "m", stream: true, stream_options: { include_usage: true }, messages });
    const list = await events(response);
    expect(list[list.length - 1]).toBe("[DONE]");
    const all = deltas(list);
    expect(all[0]).toEqual({ role: "assistant", content: "", refusal: null });
    expect(all.map((d) => d.content ?? "").join("")).toBe("hello world");
    expect(all.map((d) => d.reasoning_content ?? "").join("")).toBe("think");
    const calls = all.flatMap((d) => (d.tool_calls as Array<{ index: number; function: { name?: string; arguments: string } }>) ?? []);
    expect(calls[0]?.function.name).toBe("f");
    expect(calls.map((c) => c.function.arguments).join("")).toBe('{"a":1}');
    const usageChunk = list[list.length - 2] as { choices: unknown[]; usage: { prompt_tokens: number } };
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage.prompt_tokens).toBe(server.requests[0]?.promptTokens);
  });

  it("sends no usage unless include_usage asks for it, on openai", async () => {
    const server = await start({ profile: "openai" });
    server.script(turn({ content: "x" }));
    const list = await events(await post(server, { model: "m", stream: true, messages }));
    expect(list.some((e) => typeof e === "object" && e !== null && "usage" in e)).toBe(false);
  });

  it("answers a request that does not stream with one chat.completion object", async () => {
    const server = await start({ profile: "llama.cpp" });
    server.script(turn({ content: "done", reasoning: "r", toolCalls: [{ name: "g", arguments: "{}" }] }));
    const body = (await (await post(server, { model: "m", messages })).json()) as Record<string, any>;
    expect(body.object).toBe("chat.completion");
    expect(body.choices[0].message).toEqual({
      role: "assistant",
      content: "done",
      reasoning_content: "r",
      tool_calls: [{ id: "call_0", type: "function", function: { name: "g", arguments: "{}" } }],
    });
    expect(body.choices[0].finish_reason).toBe("tool_calls");
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
    expect(body.timings.prompt_n).toBeGreaterThan(0);
  });
});

describe("recording", () => {
  it("records method, path, headers, parsed body and time of every request", async () => {
    let clock = 1000;
    const server = await start({ now: () => clock++ });
    server.script(turn({ content: "a" }));
    await (await post(server, { model: "m", stream: true, messages })).text();
    await (await fetch(`${server.baseUrl}/models`)).text();
    await (await fetch(`${server.origin}/raw`, { method: "POST", body: "not json" })).text();
    expect(server.requests.map((r) => [r.method, r.path, r.at])).toEqual([
      ["POST", "/v1/chat/completions", 1000],
      ["GET", "/v1/models", 1001],
      ["POST", "/raw", 1002],
    ]);
    expect(server.requests[0]?.headers.authorization).toBe("Bearer k");
    expect(server.requests[2]?.body).toBe("not json");
    expect(server.chatBodies()).toEqual([{ model: "m", stream: true, messages }]);
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

  it("is safe to call twice", async () => {
    const server = await start();
    await server.close();
    await server.close();
  });
});

describe("refusal()", () => {
  it("builds the family's error with status, body and source", () => {
    const answer = refusal("openai", "unknownField", "min_p");
    expect(answer.kind).toBe("error");
    if (answer.kind !== "error") return;
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: { message: "Unrecognized request argument supplied: min_p" } });
    expect(answer.source).toBeTruthy();
  });
});
