import { describe, expect, it } from "vitest";
import type { Message, ToolDefinition } from "../../../src/shapes/config.js";
import { runAgentLoopIn, type AgentLoopOptions, type AgentLoopResult } from "../../../src/run/agent-loop.js";
import type { RuntimeState } from "../../../src/state/state.js";
import { charsPerTokenForIn } from "../../../src/wire/calibration.js";
import { capabilitiesForIn } from "../../../src/wire/capabilities.js";
import { turn, type EndpointOptions, type EndpointServer, type Scripted } from "../../support/endpoint.js";
import { endpointsWithStateClosedAfterEach } from "../../support/endpoint-client.js";

const read: ToolDefinition = {
  type: "function",
  function: { name: "read", description: "Reads a file.", parameters: { type: "object", properties: { path: { type: "string" } } } },
};

const MODEL = "loopback-model";
const WINDOW = 1024;

interface Harness {
  server: EndpointServer;
  state: RuntimeState;
  notices: string[];
  run(options?: Partial<AgentLoopOptions>): Promise<AgentLoopResult>;
  asked(path: string): number;
}

const start = endpointsWithStateClosedAfterEach({ profile: "ollama", contextWindow: WINDOW });

async function harness(endpoint: EndpointOptions = {}): Promise<Harness> {
  const { server, state } = await start(endpoint);
  const notices: string[] = [];
  return {
    server,
    state,
    notices,
    asked: (path) => server.requests.filter((request) => request.path === path).length,
    run: (options = {}) =>
      runAgentLoopIn(state, {
        config: { baseUrl: server.baseUrl, model: MODEL, maxRetries: 0 },
        messages: [{ role: "user", content: "Say hi." }],
        dispatch: () => "done",
        onNotice: (text) => notices.push(text),
        ...options,
      }),
  };
}

const long = (words: number): string => "lorem ipsum dolor sit amet ".repeat(words);
const answer = (): Scripted => turn({ content: "Hi." });
const calibrated = (h: Harness): number => charsPerTokenForIn(h.state, capabilitiesForIn(h.state, h.server.baseUrl, undefined), MODEL);

describe("the window Ollama serves, in the loop", () => {
  it("reports a prompt Ollama cut to its window on the step it happens, and learns nothing from its count", async () => {
    const h = await harness();
    h.server.script(answer());
    const events: string[] = [];
    const result = await h.run({ messages: [{ role: "user", content: long(300) }], onEvent: (event) => void events.push(event.kind) });
    expect(result.status).toBe("answered");
    expect(h.server.chatRequests()[0]!.promptTokens).toBeGreaterThan(WINDOW * 1.5);
    const said = h.notices.filter((text) => text.includes(`cut the prompt to its ${WINDOW}-token window`));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/counted 1024 prompt tokens for a request estimated at about \d+/);
    expect(events).toContain("notice");
    expect(calibrated(h)).toBe(4);
    expect(h.asked("/api/ps")).toBe(1);
  });

  it("calibrates from a count that fits, asking nothing of /api/ps", async () => {
    const h = await harness();
    h.server.script(answer());
    await h.run({ messages: [{ role: "user", content: long(20) }] });
    expect(h.notices.join("\n")).not.toMatch(/cut the prompt/);
    expect(h.asked("/api/ps")).toBe(0);
    expect(calibrated(h)).not.toBe(4);
  });

  it("folds a run with compaction to the served window before sending, and asks /api/ps once for all its steps", async () => {
    const h = await harness();
    const summarised: Message[][] = [];
    h.server.script(
      turn({ toolCalls: [{ name: "read", arguments: { path: "a" }, id: "call_a" }] }),
      turn({ toolCalls: [{ name: "read", arguments: { path: "b" }, id: "call_b" }] }),
      answer(),
    );
    const messages: Message[] = [
      { role: "user", content: long(150) },
      { role: "assistant", content: long(150) },
      { role: "user", content: "Now read a and b." },
    ];
    const result = await h.run({
      messages,
      tools: [read],
      compact: true,
      sideTasks: { summarise: (folded) => (summarised.push(folded), "An earlier talk about lorem ipsum.") },
    });
    expect(result.status).toBe("answered");
    expect(summarised).toHaveLength(1);
    for (const request of h.server.chatRequests()) expect(request.promptTokens).toBeLessThan(WINDOW);
    expect(h.notices.join("\n")).not.toMatch(/cut the prompt/);
    expect(h.asked("/api/ps")).toBe(1);
    // A second run on the same runtime finds the window in the cache.
    h.server.script(answer());
    await h.run({ compact: true, sideTasks: { summarise: () => "unused" } });
    expect(h.asked("/api/ps")).toBe(1);
  });

  it("reports a cut on a model not loaded before the first request, and folds the next step to the window", async () => {
    let loaded = false;
    const h = await harness({
      routes: {
        "GET /api/ps": () => ({
          kind: "json" as const,
          body: { models: loaded ? [{ name: `${MODEL}:latest`, model: `${MODEL}:latest`, context_length: WINDOW }] : [] },
        }),
      },
    });
    h.server.script(turn({ toolCalls: [{ name: "read", arguments: { path: "a" }, id: "call_a" }] }), answer());
    const messages: Message[] = [
      { role: "user", content: long(150) },
      { role: "assistant", content: long(150) },
      { role: "user", content: "Now read a." },
    ];
    const summarised: Message[][] = [];
    const result = await h.run({
      messages,
      tools: [read],
      compact: true,
      sideTasks: { summarise: (folded) => (summarised.push(folded), "An earlier talk about lorem ipsum.") },
      // Ollama loads the model for its first request.
      onRequest: () => void (loaded = true),
    });
    // The list was asked before the first request (not loaded yet) and again once the reply showed the cut.
    expect(result.status).toBe("answered");
    const [first, second] = h.server.chatRequests();
    expect(first!.promptTokens).toBeGreaterThan(WINDOW);
    expect(h.notices.filter((text) => text.includes(`cut the prompt to its ${WINDOW}-token window`))).toHaveLength(1);
    expect(h.notices.join("\n")).toMatch(/The next request is folded to fit it/);
    expect(summarised).toHaveLength(1);
    expect(second!.promptTokens).toBeLessThan(WINDOW);
  });

  it("sizes nothing against a model /api/ps does not list, and says nothing", async () => {
    const h = await harness({ routes: { "GET /api/ps": { kind: "json", body: { models: [] } } } });
    h.server.script(answer());
    const result = await h.run({ messages: [{ role: "user", content: long(300) }], compact: true, sideTasks: { summarise: () => "unused" } });
    expect(result.status).toBe("answered");
    expect(h.notices.join("\n")).not.toMatch(/cut the prompt|api\/ps/);
    // Once to size the first request, once more when the count came back under the estimate.
    expect(h.asked("/api/ps")).toBe(2);
  });

  it("falls back on an /api/ps that answers garbage, with one notice, and does not ask it again", async () => {
    for (const body of ["<html>not the API</html>", { models: "none" }, null]) {
      const h = await harness({ routes: { "GET /api/ps": { kind: "json", body } } });
      h.server.script(answer(), answer());
      await h.run({ messages: [{ role: "user", content: long(300) }], compact: true, sideTasks: { summarise: () => "unused" } });
      await h.run({ messages: [{ role: "user", content: long(300) }], compact: true, sideTasks: { summarise: () => "unused" } });
      expect(h.notices.filter((text) => text.includes("/api/ps"))).toHaveLength(1);
      expect(h.asked("/api/ps")).toBe(1);
    }
  });

  it("takes an entry whose window is zero or absent as unknown", async () => {
    for (const context_length of [0, undefined, "lots"]) {
      const h = await harness({
        routes: { "GET /api/ps": { kind: "json", body: { models: [{ name: `${MODEL}:latest`, model: `${MODEL}:latest`, context_length }] } } },
      });
      h.server.script(answer());
      const result = await h.run({ messages: [{ role: "user", content: long(300) }] });
      expect(result.status).toBe("answered");
      expect(h.notices.join("\n")).not.toMatch(/cut the prompt/);
    }
  });

  it("asks nothing and says nothing where the reply reports no prompt count", async () => {
    const h = await harness();
    h.server.script({
      kind: "stream",
      chunks: [
        { id: "c", object: "chat.completion.chunk", created: 1, model: MODEL, choices: [{ index: 0, delta: { content: "Hi." }, finish_reason: "stop" }] },
      ],
    });
    const result = await h.run({ messages: [{ role: "user", content: long(300) }] });
    expect(result.status).toBe("answered");
    expect(h.asked("/api/ps")).toBe(0);
    expect(calibrated(h)).toBe(4);
  });
});
