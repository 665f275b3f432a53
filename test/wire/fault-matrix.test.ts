import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Message, ToolDefinition, Turn } from "../../src/shapes/config.js";
import { runAgentLoopIn } from "../../src/run/agent-loop.js";
import { clearState, createState } from "../../src/state/state.js";
import { AgentLoopError, failedRun } from "../../src/text/errors.js";
import { describeError } from "../../src/text/error-body.js";
import {
  FAULT_CONTENT,
  FAULT_POINTS,
  FAULT_SHAPES,
  FAULT_SOURCES,
  FAULT_TOOL,
  PROFILE_NAMES,
  startEndpoint,
  type FaultPoint,
  type FaultShape,
  type EndpointServer,
} from "../support/endpoint.js";

/**
 * The documented outcome of each broken reply, for each point and both ways of answering: which
 * failure the loop's error carries, whether the request was re-sent (within `maxRetries`, here
 * 1: two requests), and the server's words the failure must carry ("" where the server said
 * nothing: a stream that stops says no words). No cell ends "answered".
 */
interface Outcome {
  failure: "UnexpectedReply" | "StreamInterrupted" | "StreamErrorEvent";
  resent: boolean;
  words: string;
}

const BLOCKED = "The request is blocked.";
const PROVIDER = "Provider disconnected unexpectedly";
const CAPACITY = "Worker local total request limit reached (33/32)";
const OPENAI = "The server had an error while processing your request";
const RATE = "Rate limit exceeded: free-models-per-day";

/** A failure is re-sent, as its HTTP twin would be, only while nothing was shown; a body that did not stream shows nothing. */
function expected(shape: FaultShape, point: FaultPoint, streamed: boolean): Outcome {
  const before = point === "before";
  switch (shape) {
    case "htmlPage":
      // Not the API: the same URL gives the same page. Written into a stream after output, the
      // markup is no event, and the stream reads as cut off.
      if (!streamed || before) return { failure: "UnexpectedReply", resent: false, words: BLOCKED };
      return { failure: "StreamInterrupted", resent: false, words: "" };
    case "emptyStream":
    case "cutStream":
      // A lost connection: re-sent while nothing was shown. A body that did not stream shows nothing.
      return { failure: "StreamInterrupted", resent: !streamed || before, words: "" };
    case "errorBesideChoice":
      return { failure: "StreamErrorEvent", resent: !streamed || before, words: PROVIDER };
    case "errorEmptyChoices":
      return { failure: "StreamErrorEvent", resent: !streamed || before, words: CAPACITY };
    case "errorNoChoices":
      return { failure: "StreamErrorEvent", resent: !streamed || before, words: OPENAI };
    case "rateLimitInStream":
      // Its HTTP twin, a 429, is retried; but not once output was shown.
      return { failure: "StreamErrorEvent", resent: !streamed || before, words: RATE };
  }
}

const lookup: ToolDefinition = {
  type: "function",
  function: { name: FAULT_TOOL, description: "Looks a city up.", parameters: { type: "object", properties: { city: { type: "string" } } } },
};
const question: Message[] = [{ role: "user", content: "What is the weather in Paris?" }];

/** Whether a transcript can be sent again as it is: every assistant tool call answered, nothing after an unanswered one. */
function validToResend(messages: readonly Message[]): boolean {
  const open = new Set<string>();
  for (const message of messages) {
    if (message.role === "assistant") {
      if (open.size > 0) return false;
      for (const call of message.tool_calls ?? []) open.add(call.id);
    } else if (message.role === "tool") {
      if (!open.delete(message.tool_call_id)) return false;
    } else if (open.size > 0) return false;
  }
  return open.size === 0;
}

interface Cell {
  status?: string;
  error?: unknown;
  dispatched: number;
  requests: number;
}

async function runCell(server: EndpointServer): Promise<Cell> {
  const state = createState();
  let dispatched = 0;
  const before = server.chatRequests().length;
  try {
    const result = await runAgentLoopIn(state, {
      config: { baseUrl: server.baseUrl, model: "loopback-model", maxRetries: 1 },
      messages: question,
      tools: [lookup],
      dispatch: () => {
        dispatched += 1;
        return "sunny";
      },
      sleep: async () => undefined,
    });
    return { status: result.status, dispatched, requests: server.chatRequests().length - before };
  } catch (error) {
    return { error, dispatched, requests: server.chatRequests().length - before };
  } finally {
    clearState(state);
  }
}

describe("the fault matrix", () => {
  it("cites where every shape comes from", () => {
    for (const shape of FAULT_SHAPES) expect(FAULT_SOURCES[shape]).toMatch(/https:\/\//);
  });

  for (const streamed of [true, false]) {
    describe(streamed ? "streamed" : "answered as one body", () => {
      for (const shape of FAULT_SHAPES) {
        for (const point of FAULT_POINTS) {
          const outcome = expected(shape, point, streamed);
          it(`${shape} ${point}: ${outcome.failure}, ${outcome.resent ? "re-sent within maxRetries" : "not re-sent"}, never answered`, async () => {
            const server = await startEndpoint({ profile: "openrouter", fault: { shape, point, streamed } });
            try {
              const cell = await runCell(server);
              expect(cell.status).toBeUndefined();
              expect(AgentLoopError.is(cell.error)).toBe(true);
              const cause = (cell.error as AgentLoopError).cause as Error & { partial?: Turn; produced?: boolean };
              expect(cause.name).toBe(outcome.failure);
              expect(cell.requests).toBe(outcome.resent ? 2 : 1);
              if (outcome.words !== "") {
                expect((cell.error as Error).message).toContain(outcome.words);
                expect(describeError(cause).message).toContain(outcome.words);
              }
              // Nothing is dispatched from a call cut off, and the transcript is the one before the step.
              expect(cell.dispatched).toBe(0);
              const run = failedRun(cell.error);
              expect(run?.messages).toEqual(question);
              expect(validToResend(run?.messages ?? [])).toBe(true);
              // What a stream had shown before it broke is on the failure, never in the transcript.
              if (streamed && point !== "before" && outcome.failure !== "UnexpectedReply") {
                expect(cause.produced).toBe(true);
                if (point === "afterContent") expect(cause.partial?.content).toBe(FAULT_CONTENT);
                else expect(cause.partial?.toolCalls[0]?.function).toEqual({ name: FAULT_TOOL, arguments: '{"city": "Par' });
              }
            } finally {
              await server.close();
            }
          });
        }
      }
    });
  }
});

describe("the fault shapes in every profile", () => {
  const servers = new Map<string, EndpointServer>();
  beforeAll(async () => {
    for (const profile of PROFILE_NAMES)
      servers.set(profile, await startEndpoint({ profile, fault: { shape: "errorBesideChoice", point: "before", times: 1 } }));
  });
  afterAll(async () => {
    await Promise.all([...servers.values()].map((server) => server.close()));
  });

  it("serves a fault to the first request and answers normally after it", async () => {
    for (const [profile, server] of servers) {
      server.script({ kind: "stream", chunks: [{ choices: [{ index: 0, delta: { content: "whole" }, finish_reason: "stop" }] }] });
      const cell = await runCell(server);
      expect({ profile, status: cell.status, requests: cell.requests }).toEqual({ profile, status: "answered", requests: 2 });
    }
  });
});
