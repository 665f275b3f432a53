import { describe, expect, it } from "vitest";
import type { Message } from "../../src/shapes/config.js";
import { capabilitiesForIn } from "../../src/wire/capabilities.js";
import { getClientIn } from "../../src/wire/client.js";
import { buildBody } from "../../src/wire/request-body.js";
import { ContextOverflow } from "../../src/text/context-overflow.js";
import { runTurnIn, type RunTurnOptions } from "../../src/turn/run-turn.js";
import { charsPerTokenForIn } from "../../src/wire/calibration.js";
import type { RuntimeState } from "../../src/state/state.js";
import { turn, type EndpointServer, type ProfileName } from "../support/endpoint.js";
import { endpointsWithStateClosedAfterEach } from "../support/endpoint-client.js";

const WINDOW = 256;
const start = endpointsWithStateClosedAfterEach();

const long: Message[] = [{ role: "user", content: "lorem ipsum dolor sit amet ".repeat(200) }];

function send(server: EndpointServer, state: RuntimeState, options: RunTurnOptions & { maxTokens?: number } = {}) {
  const { maxTokens, ...rest } = options;
  const config = { model: "m", ...(maxTokens !== undefined ? { maxTokens } : {}) };
  return runTurnIn(
    state,
    getClientIn(state, { baseUrl: server.baseUrl }),
    capabilitiesForIn(state, server.baseUrl),
    (supports, model) => buildBody(config, supports, model, long),
    { model: "m", maxRetries: 0, ...rest },
  );
}

describe("runTurn: the numbers an endpoint's overflow names", () => {
  const families: ProfileName[] = ["llama.cpp", "vllm", "openai", "openrouter", "lmstudio"];
  for (const profile of families) {
    for (const inStream of profile === "llama.cpp" ? [false, true] : [false]) {
      it(`carries ${profile}'s window and count${inStream ? ", sent inside a 200 stream" : ""}, over the configured limit`, async () => {
        const { server, state } = await start({ profile, contextWindow: WINDOW, refuse: { contextOverflow: true, overflowInStream: inStream } });
        const error = await send(server, state, { contextLimit: 100_000 }).catch((caught: unknown) => caught);
        expect(ContextOverflow.is(error)).toBe(true);
        const overflow = error as ContextOverflow;
        expect(overflow.source).toBe("endpoint");
        expect(overflow.limit).toBe(WINDOW);
        expect(overflow.requested).toBeGreaterThanOrEqual(server.chatRequests()[0]!.promptTokens!);
      });
    }
  }

  it("adds vLLM's reply ceiling where the ceiling is what does not fit", async () => {
    const { server, state } = await start({ profile: "vllm", contextWindow: 2048, refuse: { contextOverflow: true } });
    const error = (await send(server, state, { maxTokens: 1900 }).catch((caught: unknown) => caught)) as ContextOverflow;
    expect(error.limit).toBe(2048);
    expect(error.requested).toBe(server.chatRequests()[0]!.promptTokens! + 1900);
  });

  it("keeps the configured limit where the refusal names no window, and leaves requested unknown", async () => {
    const { server, state } = await start({ profile: "openai" });
    server.script({ kind: "error", status: 400, body: { error: { message: "Prompt exceeds max length", code: "1261" } } });
    const error = (await send(server, state, { contextLimit: 9000 }).catch((caught: unknown) => caught)) as ContextOverflow;
    expect(error).toMatchObject({ name: "ContextOverflow", source: "endpoint", limit: 9000 });
    expect(error.requested).toBeUndefined();
  });
});

describe("runTurn: checkPromptCount", () => {
  it("is asked with the reported count and the estimate, and a true answer keeps the count out of calibration", async () => {
    // Ollama cuts the prompt to the loaded window and reports the count it kept.
    const { server, state } = await start({ profile: "ollama", contextWindow: 1024 });
    server.script(turn({ content: "Hi." }), turn({ content: "Hi." }));
    const supports = capabilitiesForIn(state, server.baseUrl);
    const counts: unknown[] = [];
    await send(server, state, { checkPromptCount: (count) => (counts.push(count), true) });
    expect(counts).toEqual([{ reported: 1024, estimate: expect.any(Number) }]);
    expect((counts[0] as { estimate: number }).estimate).toBeGreaterThan(1300);
    expect(charsPerTokenForIn(state, supports, "m")).toBe(4);
    // Answered false, the same cut count is learned from: the reading the check keeps out.
    await send(server, state, { checkPromptCount: async () => false });
    expect(charsPerTokenForIn(state, supports, "m")).toBeGreaterThan(5);
  });
});
