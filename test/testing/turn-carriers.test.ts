import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createState, clearState } from "../../src/state/state.js";
import { getClientIn } from "../../src/wire/client.js";
import { streamTurn } from "../../src/wire/stream.js";
import { buildCompletion, buildTurnChunks } from "../../src/testing/turns.js";
import { profileNamed } from "../../src/testing/profiles.js";
import { PROFILE_NAMES, startEndpoint, turn, type EndpointServer, type ReasoningCarrier } from "../support/endpoint.js";

const carriers: ReasoningCarrier[] = ["field", "parts", "think", "harmony", "gemma"];
const context = { model: "m", includeUsage: false, usage: { prompt: 3, cached: undefined } };

describe("the endpoint's reasoning carriers", () => {
  it("writes Mistral's part list, streamed and not", () => {
    const profile = profileNamed("openai");
    const spec = { reasoning: "plan", content: "Hi", reasoningAs: "parts" as const, pieces: 1 };
    const deltas = buildTurnChunks(profile, spec, context).flatMap((chunk) =>
      typeof chunk === "object" && Array.isArray(chunk.choices) ? chunk.choices.map((choice: { delta: unknown }) => choice.delta) : [],
    );
    expect(deltas).toContainEqual({ content: [{ type: "thinking", thinking: [{ type: "text", text: "plan" }] }] });
    expect(deltas).toContainEqual({ content: [{ type: "text", text: "Hi" }] });
    const message = (buildCompletion(profile, spec, context).choices as { message: Record<string, unknown> }[])[0]!.message;
    expect(message.content).toEqual([
      { type: "thinking", thinking: [{ type: "text", text: "plan" }] },
      { type: "text", text: "Hi" },
    ]);
  });

  it("writes harmony raw with no <|end|>, as llama-server without a reasoning parser does", () => {
    const message = (
      buildCompletion(profileNamed("llama.cpp"), { reasoning: "plan", content: "Hi", reasoningAs: "harmony" }, context).choices as {
        message: Record<string, unknown>;
      }[]
    )[0]!.message;
    expect(message).toEqual({ role: "assistant", content: "<|channel|>analysis<|message|>plan<|start|>assistant<|channel|>final<|message|>Hi" });
  });

  it("writes calls inside the reasoning with no tool_calls and finish reason stop", () => {
    const completion = buildCompletion(
      profileNamed("vllm"),
      { reasoning: "read it", toolCalls: [{ name: "read", arguments: { path: "a" } }], callsInReasoning: true },
      context,
    );
    const choice = (completion.choices as { message: Record<string, unknown>; finish_reason: string }[])[0]!;
    expect(choice.finish_reason).toBe("stop");
    expect(choice.message.tool_calls).toBeUndefined();
    expect(choice.message.reasoning).toBe('read it\n<tool_call>\n{"name":"read","arguments":{"path":"a"}}\n</tool_call>');
  });
});

describe("every family speaking every carrier", () => {
  const state = createState();
  const servers = new Map<string, { server: EndpointServer; client: ReturnType<typeof getClientIn> }>();

  beforeAll(async () => {
    for (const profile of PROFILE_NAMES) {
      const server = await startEndpoint({ profile });
      servers.set(profile, { server, client: getClientIn(state, { baseUrl: server.baseUrl }) });
    }
  });
  afterAll(async () => {
    clearState(state);
    await Promise.all([...servers.values()].map(({ server }) => server.close()));
  });

  for (const profile of PROFILE_NAMES) {
    it(`reads ${profile}'s turns whichever way the reasoning travels, streamed and not`, async () => {
      const { server, client } = servers.get(profile)!;
      for (const carrier of carriers) {
        for (const stream of [true, false]) {
          server.script(turn({ reasoning: "The user greets me.", content: "Hello!", reasoningAs: carrier }));
          const result = await streamTurn(client, { model: "m", messages: [{ role: "user", content: "hi" }], stream });
          expect({ carrier, stream, content: result.content, reasoning: result.reasoning }).toEqual({
            carrier,
            stream,
            content: "Hello!",
            reasoning: "The user greets me.",
          });
        }
      }
    });
  }
});
