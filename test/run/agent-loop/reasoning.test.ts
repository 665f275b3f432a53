import { describe, expect, it } from "vitest";
import type { AssistantMessage, Message, ToolDefinition } from "../../../src/shapes/config.js";
import { createRuntime } from "../../../src/runtime.js";
import { exportCapabilitiesIn } from "../../../src/wire/snapshot.js";
import { messageChars, requestTokens } from "../../../src/text/tokens.js";
import { read, withModelLoop, type ModelLoop } from "../../support/model-loop.js";
import { turn, type EndpointOptions, type EndpointServer, type RecordedRequest } from "../../support/endpoint.js";

const question: Message[] = [{ role: "user", content: "Read a and b, then say what they hold." }];

/** A tool-call step with its reasoning, the call id named so bodies compare across families. */
const step = (reasoning: string, path: string, content?: string) =>
  turn({ reasoning, ...(content ? { content } : {}), toolCalls: [{ name: "read", arguments: { path }, id: `call_${path}` }] });

/** The three-step loop every family runs: two tool calls with reasoning, then an answer with reasoning. */
const threeSteps = () => [step("r1: read a first", "a"), step("r2: now b", "b"), turn({ reasoning: "r3: both read", content: "They hold notes." })];

function withLoop(endpoint: EndpointOptions, body: (loop: ModelLoop) => Promise<void>): Promise<void> {
  return withModelLoop(endpoint, question, body);
}

type Wire = Record<string, unknown>;

const assistants = (body: Wire): Wire[] => (body.messages as Wire[]).filter((message) => message.role === "assistant");

/** What each assistant turn of a body carries of its reasoning: [reasoning_content, reasoning]. */
const carried = (body: Wire): Array<[unknown, unknown]> => assistants(body).map((message) => [message.reasoning_content, message.reasoning]);

const chats = (server: EndpointServer): RecordedRequest[] => server.chatRequests();

describe("reasoning replay in the loop", () => {
  it("sends a vLLM gpt-oss run its reasoning back as `reasoning` only, which the server reads, and drops it once answered", async () => {
    await withLoop({ profile: "vllm", models: [{ id: "openai/gpt-oss-120b" }] }, async ({ server, told, run }) => {
      server.script(...threeSteps());
      const result = await run("openai/gpt-oss-120b");
      expect(result.turn.content).toBe("They hold notes.");
      const bodies = server.chatBodies();
      expect(bodies).toHaveLength(3);
      expect(bodies.map(carried)).toEqual([
        [],
        [[undefined, "r1: read a first"]],
        [
          [undefined, "r1: read a first"],
          [undefined, "r2: now b"],
        ],
      ]);
      expect(chats(server).map((request) => request.replayed)).toEqual([[], ["r1: read a first"], ["r1: read a first", "r2: now b"]]);
      // onMessage heard each tool-call turn as it was replayed; the transcript handed back has none.
      const heard = told.filter((message): message is AssistantMessage => message.role === "assistant");
      expect(heard.map((message) => message.reasoning_content)).toEqual(["r1: read a first", "r2: now b", undefined]);
      expect(result.messages.filter((message) => message.role === "assistant").every((message) => !("reasoning_content" in message))).toBe(true);
      expect(result.messages).toHaveLength(6);
    });
  });

  it("counts the replayed reasoning in what a request is estimated to cost, under either field", async () => {
    await withLoop({ profile: "vllm", models: [{ id: "openai/gpt-oss-120b" }] }, async ({ server, run }) => {
      server.script(...threeSteps());
      await run("openai/gpt-oss-120b");
      const second = server.chatBodies()[1] as unknown as { messages: Message[]; tools: ToolDefinition[] };
      const withReasoning = requestTokens(second, { charsPerToken: 1 });
      const stripped = second.messages.map((message) => ({ ...message, reasoning: undefined }) as Message);
      const without = requestTokens({ messages: stripped, tools: second.tools }, { charsPerToken: 1 });
      expect(withReasoning - without).toBe("r1: read a first".length);
      expect(messageChars({ role: "assistant", content: "ab", reasoning_content: "cde" })).toBe(5);
    });
  });

  it("sends a DeepSeek thinking run reasoning_content on every tool-call turn, which its check takes, and nothing else", async () => {
    await withLoop({ profile: "deepseek", models: [{ id: "deepseek-v4-flash" }] }, async ({ server, run, notices }) => {
      server.script(...threeSteps());
      const result = await run("deepseek-v4-flash");
      expect(result.turn.content).toBe("They hold notes.");
      const bodies = server.chatBodies();
      expect(bodies).toHaveLength(3);
      expect(chats(server).map((request) => request.refused)).toEqual([undefined, undefined, undefined]);
      expect(bodies.map(carried)).toEqual([
        [],
        [["r1: read a first", undefined]],
        [
          ["r1: read a first", undefined],
          ["r2: now b", undefined],
        ],
      ]);
      expect(chats(server).map((request) => request.replayed)).toEqual([[], ["r1: read a first"], ["r1: read a first", "r2: now b"]]);
      expect(notices).toEqual([]);
    });
  });

  it("latches a DeepSeek model that wants reasoning on every assistant turn after one refusal and one re-send", async () => {
    await withLoop({ profile: "deepseek", models: [{ id: "deepseek-v4-flash" }] }, async ({ server, run, notices, state }) => {
      server.script(...threeSteps());
      const first = await run("deepseek-v4-flash");
      // The next question: the earlier tool-call turns lost their reasoning when the model answered.
      server.script(step("r4: read c", "c"), turn({ reasoning: "r5", content: "c holds more notes." }));
      const messages: Message[] = [...first.messages, { role: "user", content: "And c?" }];
      const second = await run("deepseek-v4-flash", { messages });
      expect(second.turn.content).toBe("c holds more notes.");
      const requests = chats(server).slice(3);
      expect(requests.map((request) => request.refused)).toEqual(["reasoningMissing", undefined, undefined]);
      const [refused, resent, next] = requests.map((request) => request.body as Wire);
      expect(carried(refused!)).toEqual([
        [undefined, undefined],
        [undefined, undefined],
        [undefined, undefined],
      ]);
      expect(carried(resent!)).toEqual([
        ["", undefined],
        ["", undefined],
        ["", undefined],
      ]);
      expect(carried(next!)).toEqual([
        ["", undefined],
        ["", undefined],
        ["", undefined],
        ["r4: read c", undefined],
      ]);
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatch(/deepseek-v4-flash wants its reasoning sent back as reasoning_content/);
      expect(exportCapabilitiesIn(state).endpoints[0]?.models).toEqual({ "deepseek-v4-flash": { replayField: "reasoning_content", replayEveryTurn: true } });
    });
  });

  it("falls back to `reasoning` after one refusal of reasoning_content on an input message (Groq), and to none after a refusal of that too", async () => {
    await withLoop({ profile: "openai", refuse: { messageFields: ["reasoning_content"] } }, async ({ server, run, notices }) => {
      server.script(...threeSteps());
      await run("openai/gpt-oss-120b");
      expect(chats(server).map((request) => request.refused)).toEqual([undefined, "reasoningField", undefined, undefined]);
      const bodies = server.chatBodies();
      expect(carried(bodies[1]!)).toEqual([["r1: read a first", undefined]]);
      expect(carried(bodies[2]!)).toEqual([[undefined, "r1: read a first"]]);
      expect(carried(bodies[3]!)).toEqual([
        [undefined, "r1: read a first"],
        [undefined, "r2: now b"],
      ]);
      expect(notices).toEqual(["Model openai/gpt-oss-120b refused reasoning_content on its messages; sending the reasoning as reasoning instead from now on."]);
    });
    await withLoop({ profile: "openai", refuse: { messageFields: ["reasoning_content", "reasoning"] } }, async ({ server, run, notices }) => {
      server.script(...threeSteps());
      await run("llama-4-scout");
      expect(chats(server).map((request) => request.refused)).toEqual([undefined, "reasoningField", "reasoningField", undefined, undefined]);
      expect(server.chatBodies().slice(3).map(carried)).toEqual([
        [[undefined, undefined]],
        [
          [undefined, undefined],
          [undefined, undefined],
        ],
      ]);
      expect(notices).toHaveLength(2);
    });
  });

  it("folds a tool-call turn's text into its reasoning once llama.cpp's gpt-oss template refused both", async () => {
    await withLoop({ profile: "llama.cpp", models: [{ id: "gpt-oss-20b" }], refuse: { contentWithReasoning: true } }, async ({ server, run, notices }) => {
      server.script(step("r1: read a first", "a", "Reading a."), step("r2: now b", "b"), turn({ content: "They hold notes." }));
      const result = await run("gpt-oss-20b");
      expect(chats(server).map((request) => request.refused)).toEqual([undefined, "reasoningBoth", undefined, undefined]);
      const resent = assistants(server.chatBodies()[2]!)[0]!;
      expect([resent.content, resent.reasoning_content]).toEqual(["", "r1: read a first\n\nReading a."]);
      expect(chats(server)[3]?.replayed).toEqual(["r1: read a first\n\nReading a.", "r2: now b"]);
      expect(notices).toHaveLength(1);
      // The transcript keeps the turn as the model said it.
      expect(result.messages[1]).toMatchObject({ role: "assistant", content: "Reading a." });
    });
  });

  it("sends a restarted runtime's first request in the form its snapshot learned", async () => {
    await withLoop({ profile: "deepseek", models: [{ id: "deepseek-v4-flash" }] }, async ({ server, state, run }) => {
      server.script(...threeSteps());
      const first = await run("deepseek-v4-flash");
      server.script(step("r4: read c", "c"), turn({ content: "Done." }));
      await run("deepseek-v4-flash", { messages: [...first.messages, { role: "user", content: "And c?" }] });
      const blob = JSON.stringify(exportCapabilitiesIn(state));
      const restarted = createRuntime();
      try {
        expect(restarted.importCapabilities(blob).ignored).toEqual([]);
        const before = chats(server).length;
        server.script(turn({ content: "Still notes." }));
        await restarted.runAgentLoop({
          config: { baseUrl: server.baseUrl, model: "deepseek-v4-flash", maxRetries: 0 },
          messages: [...first.messages, { role: "user", content: "Anything else?" }],
          tools: [read],
          dispatch: () => "",
        });
        const fresh = chats(server).slice(before);
        expect(fresh.map((request) => request.refused)).toEqual([undefined]);
        expect(carried(fresh[0]!.body as Wire)).toEqual([
          ["", undefined],
          ["", undefined],
          ["", undefined],
        ]);
      } finally {
        restarted.reset();
      }
    });
    await withLoop({ profile: "vllm", models: [{ id: "openai/gpt-oss-120b" }] }, async ({ server, state, run }) => {
      server.script(...threeSteps());
      await run("openai/gpt-oss-120b");
      const restarted = createRuntime();
      try {
        restarted.importCapabilities(exportCapabilitiesIn(state));
        const listings = server.requests.filter((request) => request.method === "GET").length;
        server.script(step("r1", "a"), turn({ content: "Done." }));
        await restarted.runAgentLoop({
          config: { baseUrl: server.baseUrl, model: "openai/gpt-oss-120b", maxRetries: 0 },
          messages: question,
          tools: [read],
          dispatch: () => "",
        });
        // The snapshot said vLLM, so the listing is not read again and `reasoning` goes from the first request on.
        expect(server.requests.filter((request) => request.method === "GET").length).toBe(listings);
        expect(carried(server.chatBodies().at(-1)!)).toEqual([[undefined, "r1"]]);
      } finally {
        restarted.reset();
      }
    });
  });

  it("sends nothing back for a turn that called nothing, or called with no reasoning", async () => {
    await withLoop({ profile: "openai" }, async ({ server, run }) => {
      server.script(turn({ toolCalls: [{ name: "read", arguments: { path: "a" }, id: "call_a" }] }), turn({ reasoning: "thought", content: "Done." }));
      const result = await run("gpt-4o");
      expect(carried(server.chatBodies()[1]!)).toEqual([[undefined, undefined]]);
      expect(result.messages.some((message) => "reasoning_content" in message)).toBe(false);
    });
  });
});
