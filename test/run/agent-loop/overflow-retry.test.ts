import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/shapes/config.js";
import { runAgentLoopIn, type AgentLoopOptions } from "../../../src/run/agent-loop.js";
import { AgentLoopOverflow, failedRun } from "../../../src/text/errors.js";
import { contextLimitForIn } from "../../../src/wire/client.js";
import { turn, type EndpointServer } from "../../support/endpoint.js";
import { endpointsWithStateClosedAfterEach } from "../../support/endpoint-client.js";

const MODEL = "loopback-model";
const WINDOW = 1024;

const start = endpointsWithStateClosedAfterEach({ profile: "llama.cpp", contextWindow: WINDOW, refuse: { contextOverflow: true } });

const long = (words: number): string => "lorem ipsum dolor sit amet ".repeat(words);

/** A transcript too big for the served window, with an earlier exchange to fold. */
const history = (): Message[] => [
  { role: "user", content: long(150) },
  { role: "assistant", content: long(150) },
  { role: "user", content: "And now, in one word?" },
];

function options(server: EndpointServer, extra: Partial<AgentLoopOptions> = {}): AgentLoopOptions {
  return {
    // The operator believes in a window four times what the server serves.
    config: { baseUrl: server.baseUrl, model: MODEL, maxRetries: 0, contextLength: WINDOW * 4 },
    messages: history(),
    dispatch: () => "unused",
    ...extra,
  };
}

describe("an endpoint's overflow mid-run", () => {
  it("folds the transcript against the window the refusal named and sends the request once more", async () => {
    const { server, state } = await start();
    server.script(turn({ content: "Folded." }));
    const notices: string[] = [];
    const compacting: unknown[] = [];
    const summarised: Message[][] = [];
    const result = await runAgentLoopIn(
      state,
      options(server, {
        compact: true,
        sideTasks: { summarise: (folded) => (summarised.push(folded), "An earlier talk about lorem ipsum.") },
        hooks: { run: async (event, payload) => (event === "beforeCompact" && compacting.push(payload), []), events: ["beforeTurn"] },
        onNotice: (text) => notices.push(text),
      }),
    );
    expect(result.status).toBe("answered");
    expect(result.turn.content).toBe("Folded.");
    const [refused, sent] = server.chatRequests();
    expect(refused!.refused).toBe("contextOverflow");
    expect(sent!.refused).toBeUndefined();
    expect(sent!.promptTokens).toBeLessThan(WINDOW);
    expect(summarised).toHaveLength(1);
    expect(compacting).toEqual([expect.objectContaining({ forced: true })]);
    expect(notices.join("\n")).toMatch(/too long for its 1024-token window; the transcript was folded/);
    expect(result.messages[0]).toMatchObject({ role: "system" });
    // The window is remembered for the endpoint: contextLimitFor answers it without asking.
    const before = server.requests.length;
    expect(await contextLimitForIn(state, { baseUrl: server.baseUrl, model: MODEL })).toBe(WINDOW);
    expect(server.requests.length).toBe(before);
  });

  it("sizes the next run against the window an earlier refusal named, folding before it sends", async () => {
    const { server, state } = await start();
    server.script(turn({ content: "One." }), turn({ content: "Two." }));
    const summarise = () => "An earlier talk about lorem ipsum.";
    await runAgentLoopIn(state, options(server, { compact: true, sideTasks: { summarise } }));
    const sent = server.chatRequests().length;
    await runAgentLoopIn(state, options(server, { compact: true, sideTasks: { summarise } }));
    const later = server.chatRequests().slice(sent);
    expect(later).toHaveLength(1);
    expect(later[0]!.refused).toBeUndefined();
  });

  it("throws a second overflow with the endpoint's numbers and the run on it", async () => {
    const { server, state } = await start();
    const error = await runAgentLoopIn(
      state,
      options(server, { system: long(250), compact: true, sideTasks: { summarise: () => "An earlier talk about lorem ipsum." } }),
    ).catch((caught: unknown) => caught);
    expect(AgentLoopOverflow.is(error)).toBe(true);
    const overflow = error as AgentLoopOverflow;
    expect(overflow.limit).toBe(WINDOW);
    expect(overflow.requested).toBeGreaterThan(WINDOW);
    expect(server.chatRequests().map((request) => request.refused)).toEqual(["contextOverflow", "contextOverflow"]);
    expect(failedRun(error)?.messages[0]).toMatchObject({ role: "system" });
  });

  it("throws as before where the run does not fold, with the endpoint's window rather than the configured one", async () => {
    const { server, state } = await start();
    const error = await runAgentLoopIn(state, options(server)).catch((caught: unknown) => caught);
    expect(AgentLoopOverflow.is(error)).toBe(true);
    const overflow = error as AgentLoopOverflow;
    expect(overflow.limit).toBe(WINDOW);
    expect(overflow.requested).toBe(server.chatRequests()[0]!.promptTokens);
    expect(server.chatRequests()).toHaveLength(1);
    expect(failedRun(error)?.messages).toEqual(history());
  });

  it("throws where compaction is on but no summariser is configured", async () => {
    const { server, state } = await start();
    const error = await runAgentLoopIn(state, options(server, { compact: true })).catch((caught: unknown) => caught);
    expect(AgentLoopOverflow.is(error)).toBe(true);
    expect(server.chatRequests()).toHaveLength(1);
  });
});
