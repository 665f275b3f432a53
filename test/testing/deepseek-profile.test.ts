/**
 * The simulated DeepSeek profile and the replayed-reasoning refusals any profile can be told to
 * make: what each answers, in whose words, and what each family reads back off a request.
 */
import { afterEach, describe, expect, it } from "vitest";
import { deepseekThinking, missingReasoningAt } from "../../src/testing/profile-deepseek.js";
import { messageOf, startEndpoint, turn, type EndpointOptions, type EndpointServer } from "../support/endpoint.js";

const servers: EndpointServer[] = [];

async function start(options: EndpointOptions): Promise<EndpointServer> {
  const server = await startEndpoint(options);
  servers.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const tools = [{ type: "function", function: { name: "read", parameters: { type: "object", properties: {} } } }];
const call = { id: "c1", type: "function", function: { name: "read", arguments: "{}" } };

const history = (assistant: Record<string, unknown>, extra: Record<string, unknown>[] = []) => [
  { role: "user", content: "q" },
  ...extra,
  { role: "assistant", content: "", tool_calls: [call], ...assistant },
  { role: "tool", tool_call_id: "c1", content: "x" },
];

async function post(server: EndpointServer, body: Record<string, unknown>): Promise<{ status: number; text: string }> {
  const response = await fetch(`${server.baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

describe("the deepseek profile", () => {
  it("tells thinking mode from the model name and the thinking switch", () => {
    expect(deepseekThinking({ model: "deepseek-reasoner" })).toBe(true);
    expect(deepseekThinking({ model: "deepseek-v4-pro" })).toBe(true);
    expect(deepseekThinking({ model: "deepseek-v4-pro", thinking: { type: "disabled" } })).toBe(false);
    expect(deepseekThinking({ model: "deepseek-chat" })).toBe(false);
    expect(deepseekThinking({ model: "deepseek-chat", thinking: { type: "enabled" } })).toBe(true);
    expect(missingReasoningAt({ messages: history({}) }, false)).toBe(-1);
    expect(missingReasoningAt({ messages: history({}), tools }, false)).toBe(1);
    expect(missingReasoningAt({ messages: history({ reasoning_content: "" }), tools }, false)).toBe(-1);
  });

  it("refuses a thinking request whose tool-call turn lacks reasoning_content, in DeepSeek's words, and takes one that has it", async () => {
    const server = await start({ profile: "deepseek", models: [{ id: "deepseek-v4-flash" }] });
    const refused = await post(server, { model: "deepseek-v4-flash", stream: true, tools, messages: history({}) });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text)).toEqual({
      error: {
        message: "The `reasoning_content` in the thinking mode must be passed back to the API.",
        type: "invalid_request_error",
        param: null,
        code: "invalid_request_error",
      },
    });
    const reasoner = await post(server, { model: "deepseek-reasoner", stream: true, tools, messages: history({}) });
    expect(messageOf(reasoner.text)).toMatch(/^Missing `reasoning_content` field in the assistant message at message index 1\./);
    server.script(turn({ content: "ok" }), turn({ content: "ok" }));
    expect((await post(server, { model: "deepseek-v4-flash", stream: true, tools, messages: history({ reasoning_content: "r" }) })).status).toBe(200);
    expect((await post(server, { model: "deepseek-chat", stream: true, tools, messages: history({}) })).status).toBe(200);
    expect(server.chatRequests().map((request) => [request.refused, request.replayed])).toEqual([
      ["reasoningMissing", []],
      ["reasoningMissing", []],
      [undefined, ["r"]],
      [undefined, []],
    ]);
    const listing = (await (await fetch(`${server.baseUrl}/models`)).json()) as { data: unknown[] };
    expect(listing.data).toEqual([{ id: "deepseek-v4-flash", object: "model", owned_by: "deepseek" }]);
  });
});

describe("replayed-reasoning refusals and reads", () => {
  it("refuses a message field in Groq's words, text beside reasoning in llama.cpp's, and a turn without it in DeepSeek V4's", async () => {
    const groq = await start({ profile: "openai", refuse: { messageFields: ["reasoning_content"] } });
    const field = await post(groq, { model: "openai/gpt-oss-120b", stream: true, messages: history({ reasoning_content: "r" }) });
    expect([field.status, messageOf(field.text)]).toEqual([
      400,
      "'messages.1' : for 'role:assistant' the following must be satisfied[('messages.1' : property 'reasoning_content' is unsupported)]",
    ]);
    const llama = await start({ profile: "llama.cpp", refuse: { contentWithReasoning: true } });
    const both = await post(llama, { model: "gpt-oss", stream: true, messages: history({ content: "Reading.", reasoning_content: "r" }) });
    expect([both.status, messageOf(both.text)]).toEqual([
      500,
      "Cannot pass both content and thinking in an assistant message with tool calls! Put the analysis message in one or the other, but not both.",
    ]);
    const every = await start({ profile: "deepseek", refuse: { reasoningEveryTurn: true } });
    const answered = { role: "assistant", content: "earlier answer" };
    const missing = await post(every, { model: "deepseek-chat", stream: true, tools, messages: history({ reasoning_content: "r" }, [answered]) });
    expect([missing.status, messageOf(missing.text)]).toEqual([400, "The `reasoning_content` in the thinking mode must be passed back to the API."]);
    expect([groq, llama, every].map((server) => server.chatRequests()[0]?.refused)).toEqual(["reasoningField", "reasoningBoth", "reasoningMissing"]);
  });

  it("records what each family reads back: vLLM only `reasoning`, DeepSeek only reasoning_content, an unknown family nothing", async () => {
    const vllm = await start({ profile: "vllm" });
    const deepseek = await start({ profile: "deepseek" });
    const openai = await start({ profile: "openai" });
    for (const server of [vllm, deepseek, openai]) {
      server.script(turn({ content: "ok" }), turn({ content: "ok" }));
      await post(server, { model: "m", stream: true, messages: history({ reasoning_content: "rc" }) });
      await post(server, { model: "m", stream: true, messages: history({ reasoning: "r" }) });
    }
    expect(vllm.chatRequests().map((request) => request.replayed)).toEqual([[], ["r"]]);
    expect(deepseek.chatRequests().map((request) => request.replayed)).toEqual([["rc"], []]);
    expect(openai.chatRequests().map((request) => request.replayed)).toEqual([undefined, undefined]);
  });
});
