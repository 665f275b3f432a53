import { readFileSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { resolve } from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { messageOf, refusal, turn } from "./support/endpoint.js";
import { endpointsClosedAfterEach, messages, post, json, events } from "./support/endpoint-client.js";

const root = resolve(import.meta.dirname, "..");

describe("the ./testing entry", () => {
  it("is published with its own types and import paths, beside the agent-core bin", () => {
    const manifest = JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as {
      exports: Record<string, unknown>;
      bin: Record<string, string>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
      devDependencies: Record<string, string>;
    };
    expect(manifest.exports["./testing"]).toEqual({ types: "./dist/testing.d.ts", import: "./dist/testing.js" });
    expect(manifest.bin["agent-core"]).toBe("./dist/cli.js");
    expect(manifest.peerDependencies["gpt-tokenizer"]).toBeDefined();
    expect(manifest.peerDependenciesMeta["gpt-tokenizer"]?.optional).toBe(true);
    expect(manifest.devDependencies["gpt-tokenizer"]).toBeDefined();
  });

  it("loads the tokenizer only on demand and needs nothing else outside Node", async () => {
    const result = await build({
      entryPoints: [resolve(root, "src/testing.ts")],
      bundle: true,
      write: false,
      metafile: true,
      platform: "node",
      format: "esm",
      packages: "external",
      logLevel: "silent",
    });
    const imports = Object.values(result.metafile.outputs).flatMap((output) => output.imports);
    const packages = imports.filter((entry) => !entry.path.startsWith("node:") && !["http", "net"].includes(entry.path));
    expect(packages).toEqual([{ path: "gpt-tokenizer/encoding/o200k_base", kind: "dynamic-import", external: true }]);
  });
});

const start = endpointsClosedAfterEach();

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
