import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntime } from "../../src/index.js";
import { CliFailure, EXIT_CODES } from "../../src/cli/errors.js";
import { main as runMain, type CliIo } from "../../src/cli/main.js";
import { runDemo } from "../../src/cli/demo.js";
import { probeEndpoint } from "../../src/cli/probe.js";
import { readHeaders } from "../../src/cli/args.js";
import { startEndpoint, turn, type EndpointOptions, type EndpointServer, type RecordedRequest, type Scripted } from "../support/endpoint.js";

const main = (argv: string[], streams: CliIo) => runMain(argv, streams, { demo: (options) => runDemo({ ...options, delayMs: 0 }), probe: probeEndpoint });

function sink(): { write(text: string): boolean; isTTY: boolean; text(): string } {
  let written = "";
  return {
    isTTY: false,
    write(text: string) {
      written += text;
      return true;
    },
    text: () => written,
  };
}

function io(): CliIo & { out: ReturnType<typeof sink>; err: ReturnType<typeof sink> } {
  const out = sink();
  const err = sink();
  return { stdout: out, stderr: err, env: {}, out, err };
}

// Portkey's gateway refuses a request that names no provider, whatever it asks for
// (Portkey-AI/gateway src/middlewares/requestValidator/index.ts).
const PORTKEY_WORDS = "Either x-portkey-config or x-portkey-provider header is required";
const PROVIDER = "@secret-provider-slug";

/** A router that answers only requests carrying its routing header; everything else gets its 400. */
function routedBy(header: string, answer: (request: RecordedRequest) => Scripted): (request: RecordedRequest) => Scripted {
  return (request) =>
    request.headers[header] === undefined ? { kind: "error", status: 400, body: { status: "failure", message: PORTKEY_WORDS } } : answer(request);
}

function probeModel(request: RecordedRequest): Scripted {
  const body = request.body as Record<string, unknown>;
  if (Array.isArray(body.tools) && body.tools.length > 0) return turn({ toolCalls: [{ name: "record_word", arguments: { word: "ok" } }] });
  if (body.response_format) return turn({ content: '{"word":"ok"}' });
  return turn({ content: "ok" });
}

const servers: EndpointServer[] = [];
async function serve(options: EndpointOptions): Promise<EndpointServer> {
  const server = await startEndpoint(options);
  servers.push(server);
  return server;
}
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agent-core-probe-"));
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await rm(dir, { recursive: true, force: true });
});

describe("a probe that learned nothing", () => {
  it("exits non-zero with the first failure's status and words, writes no snapshot and latches nothing", async () => {
    const server = await serve({ profile: "openai", respond: routedBy("x-portkey-provider", probeModel) });
    const snapshot = join(dir, "none.json");
    const streams = io();
    const code = await main(["probe", server.baseUrl, "--model", "loopback-model", "--snapshot", snapshot], streams);
    expect(code).toBe(EXIT_CODES.failed);
    expect(streams.err.text()).toContain("Every chat request of the probe failed, so nothing was learned");
    expect(streams.err.text()).toContain("HTTP 400");
    expect(streams.err.text()).toContain(PORTKEY_WORDS);
    await expect(readFile(snapshot, "utf8")).rejects.toThrow();
    // The same probe on a runtime of the caller's: the prefill refusal said what every request said, so no flag is learned.
    const runtime = createRuntime();
    const failure = await probeEndpoint({ baseUrl: server.baseUrl, model: "loopback-model", runtime }).catch((error: unknown) => error);
    expect(CliFailure.is(failure)).toBe(true);
    expect(JSON.stringify(runtime.exportCapabilities())).not.toContain("assistantPrefill");
    runtime.reset();
  });

  it("learns from the router once its routing header is passed with --header, which reaches every request and is never printed", async () => {
    const server = await serve({ profile: "openai", respond: routedBy("x-portkey-provider", probeModel) });
    const streams = io();
    const code = await main(["probe", server.baseUrl, "--header", `x-portkey-provider: ${PROVIDER}`, "--header", "x-portkey-trace-id: probe-1"], streams);
    expect(code).toBe(0);
    expect(server.requests.length).toBeGreaterThan(4);
    for (const request of server.requests) {
      expect(request.headers["x-portkey-provider"], `${request.method} ${request.path}`).toBe(PROVIDER);
      expect(request.headers["x-portkey-trace-id"]).toBe("probe-1");
    }
    expect(streams.out.text() + streams.err.text()).not.toContain(PROVIDER);
  });
});

describe("a failing model listing", () => {
  it("reports a listing still loading as loading, with its status and words", async () => {
    const server = await serve({ profile: "llama.cpp", loading: 100 });
    const streams = io();
    const code = await main(["probe", server.baseUrl], streams);
    expect(code).toBe(EXIT_CODES.loading);
    expect(streams.err.text()).toMatch(/answered GET \/models with HTTP 503: Loading model\. The server is still loading the model/);
    // Given a model, the probe stops the same way: the chat requests would wait on the same load.
    const given = io();
    expect(await main(["probe", server.baseUrl, "--model", "loopback-model"], given)).toBe(EXIT_CODES.loading);
  });

  it("reports another failing listing with its status and words, and carries on without it where a model is given", async () => {
    const server = await serve({
      profile: "openai",
      // Go's net/http answer for a route it does not serve (Ollama, and many Go proxies).
      routes: { "GET /v1/models": { kind: "error", status: 404, body: "404 page not found" } },
      respond: probeModel,
    });
    const streams = io();
    expect(await main(["probe", server.baseUrl], streams)).toBe(EXIT_CODES.unknownModel);
    expect(streams.err.text()).toContain(
      "answered GET /models with HTTP 404: 404 page not found; with no listing there is no model to choose from, so pass --model NAME.",
    );
    const progress: string[] = [];
    const report = await probeEndpoint({ baseUrl: server.baseUrl, model: "loopback-model", onProgress: (line) => progress.push(line) });
    expect(report.listed).toBe(false);
    expect(progress.join("\n")).toContain("HTTP 404: 404 page not found; probing loopback-model without the listing");
  });
});

describe("--header on the demo", () => {
  it("sends the header with every request of the run and never prints its value", async () => {
    const server = await serve({ profile: "openai", respond: routedBy("x-portkey-provider", () => turn({ content: "All done." })) });
    const streams = io();
    const code = await main(["demo", "--base-url", server.baseUrl, "--model", "loopback-model", "--header", `x-portkey-provider: ${PROVIDER}`], streams);
    expect(code).toBe(0);
    expect(streams.out.text()).toContain("All done.");
    expect(server.chatRequests().length).toBeGreaterThan(0);
    for (const request of server.requests) expect(request.headers["x-portkey-provider"], `${request.method} ${request.path}`).toBe(PROVIDER);
    expect(streams.out.text() + streams.err.text()).not.toContain(PROVIDER);
  });
});

describe("readHeaders", () => {
  it("reads repeated Name: value pairs and refuses a malformed one without quoting its value", () => {
    expect(readHeaders(["X-Route: a", "x-other:  b c "], "probe")).toEqual({ "X-Route": "a", "x-other": "b c" });
    expect(readHeaders(undefined, "probe")).toBeUndefined();
    for (const bad of ["no colon here", "bad name: v", "X-Empty:", "content-type: text/plain"]) {
      const error = (() => {
        try {
          readHeaders([bad], "demo");
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(CliFailure.is(error) && error.kind === "usage", bad).toBe(true);
    }
    expect(() => readHeaders(["X-Secret: v1\nInjected: x"], "probe")).toThrow(/X-Secret needs a value on one line/);
  });
});
