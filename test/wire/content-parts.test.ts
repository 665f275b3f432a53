import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import "../support/fast-check-seed.js";
import { readContentParts, setAsideNotice } from "../../src/wire/content-parts.js";
import { TurnReader } from "../../src/wire/turn-reader.js";
import { createState, clearState } from "../../src/state/state.js";
import { getClientIn } from "../../src/wire/client.js";
import { streamTurn } from "../../src/wire/stream.js";
import type { Turn } from "../../src/shapes/config.js";
import { startEndpoint, type EndpointServer } from "../support/endpoint.js";

function read(parts: unknown[]) {
  const out = { text: "", reasoning: "", setAside: [] as string[], order: [] as string[] };
  readContentParts(parts, {
    text: (text) => {
      out.text += text;
      out.order.push(`t:${text}`);
    },
    reasoning: (text) => {
      out.reasoning += text;
      out.order.push(`r:${text}`);
    },
    setAside: (kind) => out.setAside.push(kind),
  });
  return out;
}

/** Reads deltas, one per chunk, straight through a TurnReader. */
function readDeltas(deltas: unknown[], finish = "stop"): { turn: Turn; notices: string[] } {
  const notices: string[] = [];
  const reader = new TurnReader(
    { onNotice: (text) => notices.push(text) },
    0,
    () => 0,
    () => undefined,
  );
  for (const delta of deltas) reader.chunk({ choices: [{ index: 0, delta }] });
  reader.chunk({ choices: [{ index: 0, delta: {}, finish_reason: finish }] });
  return { turn: reader.finish(0), notices };
}

describe("readContentParts", () => {
  it("reads text parts as answer and Magistral's thinking parts as reasoning, in order", () => {
    // The shape of vercel/ai packages/mistral/src/__fixtures__/mistral-reasoning.chunks.txt
    const out = read([
      { type: "thinking", thinking: [{ type: "text", text: "2+2=4." }] },
      { type: "text", text: "2 + 2 = 4" },
    ]);
    expect(out).toEqual({ text: "2 + 2 = 4", reasoning: "2+2=4.", setAside: [], order: ["r:2+2=4.", "t:2 + 2 = 4"] });
  });

  it("reads plain strings among the parts as answer, and a thinking part whose thinking is a string", () => {
    expect(read(["3", { type: "thinking", thinking: "so" }, { type: "text", text: "91" }])).toMatchObject({ text: "391", reasoning: "so" });
  });

  it("reads reasoning and reasoning_text parts as reasoning", () => {
    expect(
      read([
        { type: "reasoning", reasoning: "a" },
        { type: "reasoning_text", text: "b" },
      ]),
    ).toMatchObject({ text: "", reasoning: "ab" });
  });

  it("sets aside what is neither text nor reasoning, naming its kind", () => {
    const out = read([{ type: "image_url", image_url: { url: "x" } }, 7, null, { type: "text", text: 5 }, { text: "ok" }, { type: "thinking", thinking: 3 }]);
    expect(out.text).toBe("ok");
    expect(out.setAside).toEqual(["image_url", "number", "null", "text", "thinking"]);
  });

  it("says in a notice what was set aside, with the start of the part", () => {
    expect(setAsideNotice("reference", { type: "reference", reference_ids: [1] })).toBe(
      'The reply held a content part of type "reference" that is neither text nor reasoning; it was kept out of the answer: {"type":"reference","reference_ids":[1]}',
    );
    expect(setAsideNotice("text", { type: "text", text: "x".repeat(400) }).length).toBeLessThan(400);
  });

  it("never throws on a malformed part list", () => {
    fc.assert(
      fc.property(fc.array(fc.anything({ maxDepth: 4 })), (parts) => {
        expect(() => read(parts)).not.toThrow();
      }),
    );
    const deep: unknown[] = [];
    let cursor: unknown[] = deep;
    for (let i = 0; i < 20_000; i++) {
      const inner: unknown[] = [];
      cursor.push({ type: "thinking", thinking: inner });
      cursor = inner;
    }
    expect(read(deep).setAside.length).toBe(1);
  });
});

describe("the turn reader on content parts", () => {
  it("keeps every digit of an answer whose pieces mix strings and parts", () => {
    const { turn } = readDeltas([{ content: "3" }, { content: [{ type: "text", text: "9" }] }, { content: "1" }]);
    expect(turn.content).toBe("391");
  });

  it("says each kind of part it sets aside once, and keeps the answer around it", () => {
    const { turn, notices } = readDeltas([
      { content: [{ type: "reference", reference_ids: [1] }] },
      { content: [{ type: "text", text: "a" }] },
      { content: [{ type: "reference", reference_ids: [2] }] },
    ]);
    expect(turn.content).toBe("a");
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/type "reference"/);
  });

  it("reads fences inside text parts like fences in a string", () => {
    const { turn } = readDeltas([{ content: [{ type: "text", text: "<think>plan</think>" }] }, { content: [{ type: "text", text: "Hi" }] }]);
    expect(turn).toMatchObject({ content: "Hi", reasoning: "plan" });
  });

  it("reads the same Turn however the parts are spread over chunks", () => {
    const part = fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.record({ type: fc.constant("text"), text: fc.string({ maxLength: 6 }) }),
      fc.record({
        type: fc.constant("thinking"),
        thinking: fc.array(fc.record({ type: fc.constant("text"), text: fc.string({ maxLength: 6 }) }), { maxLength: 3 }),
      }),
      fc.record({ type: fc.constant("reference"), reference_ids: fc.array(fc.nat(), { maxLength: 2 }) }),
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 6 }), (parts, cuts) => {
        const whole = readDeltas([{ content: parts }], "stop");
        const points = [...new Set(cuts.map((cut) => cut % (parts.length + 1)))].sort((a, b) => a - b);
        const deltas: unknown[] = [];
        let from = 0;
        for (const point of [...points, parts.length]) {
          if (point > from) deltas.push({ content: parts.slice(from, point) });
          from = Math.max(from, point);
        }
        const spread = readDeltas(deltas, "stop");
        expect({ content: spread.turn.content, reasoning: spread.turn.reasoning }).toEqual({ content: whole.turn.content, reasoning: whole.turn.reasoning });
        expect(spread.notices).toEqual(whole.notices);
      }),
    );
  });
});

describe("streamTurn on content parts, streamed and not", () => {
  const state = createState();
  let server: EndpointServer;
  let client: ReturnType<typeof getClientIn>;
  const body = { model: "magistral-medium-2507", messages: [{ role: "user", content: "2+2?" }], stream: true };
  const parts = [[{ type: "thinking", thinking: [{ type: "text", text: "Basic arithmetic." }] }], [{ type: "text", text: "2 + 2 = 4" }]];

  beforeAll(async () => {
    server = await startEndpoint({ profile: "openai" });
    client = getClientIn(state, { baseUrl: server.baseUrl });
  });
  afterAll(async () => {
    clearState(state);
    await server.close();
  });

  it("reads a streamed reply whose deltas are parts", async () => {
    server.script({
      kind: "stream",
      chunks: [
        ...parts.map((content) => ({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })),
        { choices: [{ index: 0, delta: { content: "" }, finish_reason: "stop" }] },
      ],
    });
    const thinking: string[] = [];
    const turn = await streamTurn(client, body, { onThinking: (text) => thinking.push(text) });
    expect(turn).toMatchObject({ content: "2 + 2 = 4", reasoning: "Basic arithmetic.", finishReason: "stop" });
    expect(thinking).toEqual(["Basic arithmetic."]);
  });

  it("reads a non-streamed reply whose message content is parts", async () => {
    server.script({
      kind: "json",
      body: { object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: parts.flat() }, finish_reason: "stop" }] },
    });
    const turn = await streamTurn(client, body);
    expect(turn).toMatchObject({ content: "2 + 2 = 4", reasoning: "Basic arithmetic.", finishReason: "stop" });
  });
});
