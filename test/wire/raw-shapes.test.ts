import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import "../support/fast-check-seed.js";
import { TurnReader } from "../../src/wire/turn-reader.js";
import { createState, clearState } from "../../src/state/state.js";
import { getClientIn } from "../../src/wire/client.js";
import { streamTurn } from "../../src/wire/stream.js";
import type { ToolCall } from "../../src/shapes/config.js";
import { startEndpoint, type EndpointServer } from "../support/endpoint.js";

/** A reply as a server passed it through, and what its Turn must hold. */
interface Shape {
  name: string;
  /** The content the model wrote, in one string (streamed, it is cut anywhere). */
  content?: string;
  /** The reasoning field, where the server parsed reasoning out itself. */
  reasoning?: string;
  /** Tool-call pieces sent in the last chunk. */
  toolCalls?: unknown[];
  expected: { content: string; reasoning: string; toolCalls?: ToolCall[] };
}

const shapes: Shape[] = [
  {
    name: "gpt-oss harmony served raw, the final channel after an analysis with no <|end|>",
    content: "<|channel|>analysis<|message|>User asks 2+2.<|start|>assistant<|channel|>final<|message|>2 + 2 = 4<|return|>",
    expected: { content: "2 + 2 = 4", reasoning: "User asks 2+2." },
  },
  {
    name: "gpt-oss harmony served raw, a commentary-channel call left for recovery",
    content:
      '<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Oslo"}<|call|>',
    expected: { content: '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Oslo"}', reasoning: "Need weather." },
  },
  {
    name: "Gemma 4 served raw, the thought channel then the answer",
    content: "<|channel>thought\nThe user greets me.<channel|>Hello!",
    expected: { content: "Hello!", reasoning: "The user greets me." },
  },
  {
    name: "a call written inside the reasoning field, kept whole for the loop to recover",
    reasoning: 'I will read it.\n<tool_call>\n{"name": "read", "arguments": {"path": "a"}}\n</tool_call>',
    expected: { content: "", reasoning: 'I will read it.\n<tool_call>\n{"name": "read", "arguments": {"path": "a"}}\n</tool_call>' },
  },
  {
    name: "harmony's <|call|> left on a parsed call's arguments",
    toolCalls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}<|call|>' } }],
    expected: { content: "", reasoning: "", toolCalls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
  },
];

function cutText(text: string, points: readonly number[]): string[] {
  const sorted = [...new Set(points.map((point) => point % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const point of [...sorted, text.length]) {
    if (point > from) pieces.push(text.slice(from, point));
    from = Math.max(from, point);
  }
  return pieces;
}

function deltas(shape: Shape, points: readonly number[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  if (shape.reasoning !== undefined) for (const piece of cutText(shape.reasoning, points)) out.push({ reasoning_content: piece });
  if (shape.content !== undefined) for (const piece of cutText(shape.content, points)) out.push({ content: piece });
  if (shape.toolCalls !== undefined) out.push({ tool_calls: shape.toolCalls });
  return out;
}

describe.each(shapes.map((shape) => [shape.name, shape] as const))("%s", (_name, shape) => {
  it("reads the same Turn cut into chunks anywhere", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 16 }), (points) => {
        const reader = new TurnReader(
          {},
          0,
          () => 0,
          () => undefined,
        );
        for (const delta of deltas(shape, points)) reader.chunk({ choices: [{ index: 0, delta }] });
        reader.chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
        const turn = reader.finish(0);
        expect({ content: turn.content, reasoning: turn.reasoning }).toEqual({ content: shape.expected.content, reasoning: shape.expected.reasoning });
        if (shape.expected.toolCalls) expect(turn.toolCalls).toEqual(shape.expected.toolCalls);
      }),
      { numRuns: 200 },
    );
  });
});

describe("the new shapes over the wire", () => {
  const state = createState();
  let server: EndpointServer;
  let client: ReturnType<typeof getClientIn>;
  const body = { model: "m", messages: [{ role: "user", content: "hi" }], stream: true };

  beforeAll(async () => {
    server = await startEndpoint({ profile: "llama.cpp" });
    client = getClientIn(state, { baseUrl: server.baseUrl });
  });
  afterAll(async () => {
    clearState(state);
    await server.close();
  });

  it.each(shapes.map((shape) => [shape.name, shape] as const))("reads %s streamed and not", async (_name, shape) => {
    server.script({
      kind: "stream",
      chunks: [
        ...deltas(shape, [1, 7, 19, 33]).map((delta) => ({ choices: [{ index: 0, delta, finish_reason: null }] })),
        { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
      ],
    });
    const streamed = await streamTurn(client, body);
    const message: Record<string, unknown> = { role: "assistant", content: shape.content ?? "" };
    if (shape.reasoning !== undefined) message.reasoning_content = shape.reasoning;
    if (shape.toolCalls !== undefined) message.tool_calls = shape.toolCalls;
    server.script({ kind: "json", body: { object: "chat.completion", choices: [{ index: 0, message, finish_reason: "stop" }] } });
    const whole = await streamTurn(client, body);
    for (const turn of [streamed, whole]) {
      expect({ content: turn.content, reasoning: turn.reasoning }).toEqual({ content: shape.expected.content, reasoning: shape.expected.reasoning });
      if (shape.expected.toolCalls) expect(turn.toolCalls).toEqual(shape.expected.toolCalls);
    }
  });
});
