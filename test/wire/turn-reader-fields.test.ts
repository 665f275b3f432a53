import { afterAll, describe, expect, it } from "vitest";
import { getClientIn } from "../../src/wire/client.js";
import { createState, clearState } from "../../src/state/state.js";
import { streamTurn } from "../../src/wire/stream.js";
import { startEndpoint, type EndpointServer } from "../support/endpoint.js";

const state = createState();
const body = { model: "loopback-model", messages: [{ role: "user" as const, content: "hi" }] };
const servers: EndpointServer[] = [];

afterAll(async () => {
  clearState(state);
  await Promise.all(servers.map((server) => server.close()));
});

async function read(chunks: Array<Record<string, unknown>>) {
  const server = await startEndpoint({ profile: "openai" });
  servers.push(server);
  server.script({
    kind: "stream",
    chunks: chunks.map((delta, index) => ({ choices: [{ index: 0, delta, finish_reason: index === chunks.length - 1 ? "tool_calls" : null }] })),
  });
  return streamTurn(getClientIn(state, { baseUrl: server.baseUrl }), body);
}

describe("the turn reader's provider fields", () => {
  it("keeps a field on a call that came whole without an index, beside its id, name and arguments", async () => {
    const turn = await read([
      {
        role: "assistant",
        tool_calls: [
          { extra_content: { google: { thought_signature: "sig" } }, function: { arguments: '{"q":1}', name: "find" }, id: "jm4owj31", type: "function" },
        ],
      },
      {},
    ]);
    expect(turn.toolCalls).toEqual([
      { extra_content: { google: { thought_signature: "sig" } }, id: "jm4owj31", type: "function", function: { name: "find", arguments: '{"q":1}' } },
    ]);
    expect(turn.messageFields).toBeUndefined();
  });

  it("folds a message field streamed in pieces and leaves out the fields it reads and the nulls", async () => {
    const turn = await read([
      { role: "assistant", refusal: null, annotations: null, reasoning_details: [{ type: "reasoning.text", text: "a", index: 0 }] },
      {
        reasoning_details: [{ type: "reasoning.text", text: "b", index: 0 }],
        tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "f", arguments: "{}" } }],
      },
      { reasoning_details: [{ type: "reasoning.encrypted", data: "opaque", index: 1 }] },
    ]);
    expect(turn.messageFields).toEqual({
      reasoning_details: [
        { type: "reasoning.text", text: "ab", index: 0 },
        { type: "reasoning.encrypted", data: "opaque", index: 1 },
      ],
    });
    expect(turn.toolCalls).toEqual([{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }]);
  });
});
