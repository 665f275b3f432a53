import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/shapes/config.js";
import type { AgentLoopOptions } from "../../../src/run/agent-loop.js";
import { clearState, createState } from "../../../src/state/state.js";
import { exportCapabilitiesIn, importCapabilitiesIn } from "../../../src/wire/snapshot.js";
import { SUMMARY_LEAD } from "../../../src/run/compaction.js";
import { TOOLS_IN_PROMPT_LEAD } from "../../../src/wire/message-shaping.js";
import { withModelLoop, type ModelLoop } from "../../support/model-loop.js";
import { turn, type EndpointOptions, type EndpointServer, type Scripted } from "../../support/endpoint.js";

const question: Message[] = [{ role: "user", content: "Read a, then say what it holds." }];
const callStep = (id?: string): Scripted => turn({ toolCalls: [{ name: "read", arguments: { path: "a" }, ...(id ? { id } : {}) }] });
const answer = (content = "Done."): Scripted => turn({ content });

function withLoop(endpoint: EndpointOptions, body: (loop: ModelLoop) => Promise<void>): Promise<void> {
  return withModelLoop(endpoint, question, body);
}

const refusals = (server: EndpointServer): string[] => server.chatRequests().flatMap((request) => (request.refused ? [request.refused] : []));

/** Runs the same loop again on the same runtime and on a fresh one that imported its snapshot; neither may meet a refusal. */
async function meetsNoneAgain(harness: ModelLoop, model: string, options: Partial<AgentLoopOptions>, scripts: () => Scripted[]): Promise<void> {
  const { server, state, run } = harness;
  const before = refusals(server).length;
  server.script(...scripts());
  await run(model, options);
  expect(refusals(server)).toHaveLength(before);
  const restarted = createState();
  try {
    expect(importCapabilitiesIn(restarted, exportCapabilitiesIn(state)).ignored).toEqual([]);
    server.script(...scripts());
    await run(model, options, restarted);
    expect(refusals(server)).toHaveLength(before);
  } finally {
    clearState(restarted);
  }
}

describe("system placement", () => {
  const history: Message[] = [
    { role: "system", content: "House rules." },
    { role: "user", content: "First question. ".repeat(190) },
    { role: "assistant", content: "First answer. ".repeat(210) },
    { role: "user", content: "Second question. ".repeat(180) },
    { role: "assistant", content: "Second answer. ".repeat(200) },
    ...question,
  ];

  it("completes a Qwen 3.5 run with the system option, a system message and a compaction after one 500, then never again", async () => {
    await withLoop({ profile: "llama.cpp", refuse: { systemNotFirst: true } }, async (harness) => {
      const { server, run, notices } = harness;
      const options: Partial<AgentLoopOptions> = {
        system: "You are careful.",
        messages: history,
        config: { baseUrl: server.baseUrl, model: "qwen3.5-27b", maxRetries: 0, contextLength: 4000 },
        compact: true,
        sideTasks: { summarise: () => "Two questions were asked and answered." },
      };
      server.script(callStep(), answer());
      const result = await run("qwen3.5-27b", options);
      expect(result.turn.content).toBe("Done.");
      expect(refusals(server)).toEqual(["systemNotFirst"]);
      // The transcript keeps the summary as a message of its own, so a later fold continues it.
      expect(result.messages.map((message) => message.role).slice(0, 3)).toEqual(["system", "system", "user"]);
      expect(String(result.messages[1]!.content).startsWith(SUMMARY_LEAD)).toBe(true);
      const sent = server.chatBodies().at(-1)!.messages as Message[];
      expect(sent.filter((message) => message.role === "system")).toHaveLength(1);
      const system = String(sent[0]!.content);
      for (const text of ["You are careful.", "House rules.", SUMMARY_LEAD.trim(), "Two questions were asked and answered."]) expect(system).toContain(text);
      expect(notices.some((text) => text.includes("system message"))).toBe(true);
      await meetsNoneAgain(harness, "qwen3.5-27b", options, () => [callStep(), answer()]);
    });
  });

  it("learns the same placement from vLLM's 400, folding a system message from mid-transcript to the top", async () => {
    await withLoop({ profile: "vllm", refuse: { systemNotFirst: true } }, async ({ server, run }) => {
      server.script(answer());
      const messages: Message[] = [{ role: "user", content: "Earlier." }, { role: "system", content: "Mid-run note." }, ...question];
      const result = await run("Qwen/Qwen3.5-35B-A3B-FP8", { system: "Option.", messages });
      expect(result.turn.content).toBe("Done.");
      expect(server.chatBodies()).toHaveLength(2);
      expect(refusals(server)).toEqual(["systemNotFirst"]);
      expect((server.chatBodies()[1]!.messages as Message[]).map((message) => message.role)).toEqual(["system", "user", "user"]);
      expect((server.chatBodies()[1]!.messages as Message[])[0]).toEqual({ role: "system", content: "Option.\n\nMid-run note." });
    });
  });

  it("sends the system option and a leading system message as one message by default", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run }) => {
      server.script(answer());
      await run("m", { system: "Option.", messages: [{ role: "system", content: "Host." }, ...question] });
      expect((server.chatBodies()[0]!.messages as Message[]).slice(0, 2)).toEqual([{ role: "system", content: "Option.\n\nHost." }, question[0]]);
    });
  });
});

describe("Kimi's replay wording", () => {
  const history: Message[] = [
    { role: "user", content: "Earlier." },
    { role: "assistant", content: "", tool_calls: [{ id: "call_old", type: "function", function: { name: "read", arguments: '{"path":"z"}' } }] },
    { role: "tool", tool_call_id: "call_old", content: "old contents" },
    { role: "assistant", content: "It held old contents." },
    ...question,
  ];

  it("re-sends a history without reasoning once, with the field present, then never again", async () => {
    await withLoop({ profile: "openai", refuse: { models: { "kimi-k2.6": { reasoningOnToolCalls: true } } } }, async (harness) => {
      const { server, run } = harness;
      server.script(callStep(), answer());
      const result = await run("kimi-k2.6", { messages: history });
      expect(result.turn.content).toBe("Done.");
      expect(refusals(server)).toEqual(["toolCallReasoning"]);
      const resent = (server.chatBodies()[1]!.messages as Array<Record<string, unknown>>).filter((message) => message.role === "assistant");
      expect(resent.every((message) => typeof message.reasoning_content === "string")).toBe(true);
      await meetsNoneAgain(harness, "kimi-k2.6", { messages: history }, () => [callStep(), answer()]);
    });
  });
});

describe("Mistral's id rule", () => {
  const history: Message[] = [
    { role: "user", content: "Earlier." },
    {
      role: "assistant",
      content: "",
      tool_calls: [{ id: "call_PTLP8xhu3uwZk4l3nlnrrJha", type: "function", function: { name: "read", arguments: '{"path":"z"}' } }],
    },
    { role: "tool", tool_call_id: "call_PTLP8xhu3uwZk4l3nlnrrJha", content: "old contents" },
    { role: "assistant", content: "It held old contents." },
    ...question,
  ];

  it("rewrites the ids it sends after one refusal, paired, while the transcript keeps its own", async () => {
    await withLoop({ profile: "openai", refuse: { models: { "mistral-large-latest": { toolCallIdLength: 9 } } } }, async (harness) => {
      const { server, run } = harness;
      server.script(callStep("call_made_by_library"), answer());
      const result = await run("mistral-large-latest", { messages: history });
      expect(result.turn.content).toBe("Done.");
      expect(refusals(server)).toEqual(["toolCallId"]);
      const last = server.chatBodies().at(-1)!.messages as Array<Record<string, unknown>>;
      const callIds = last.flatMap((message) => ((message.tool_calls as Array<{ id: string }> | undefined) ?? []).map((call) => call.id));
      const answered = last.filter((message) => message.role === "tool").map((message) => message.tool_call_id);
      expect(callIds).toHaveLength(2);
      for (const id of callIds) expect(id).toMatch(/^[A-Za-z0-9]{9}$/);
      expect(answered).toEqual(callIds);
      const kept = result.messages.flatMap((message) => (message.role === "assistant" ? (message.tool_calls ?? []).map((call) => call.id) : []));
      expect(kept).toEqual(["call_PTLP8xhu3uwZk4l3nlnrrJha", "call_made_by_library"]);
      await meetsNoneAgain(harness, "mistral-large-latest", { messages: history }, () => [callStep("call_again"), answer()]);
    });
  });
});

describe("tools refused", () => {
  it("describes the tools in the prompt after llama.cpp's --jinja refusal and runs the calls read from the text", async () => {
    await withLoop({ profile: "llama.cpp", refuse: { tools: true } }, async (harness) => {
      const { server, run, notices } = harness;
      const dispatched: string[] = [];
      const script = () => [answer('<tool_call>\n{"name": "read", "arguments": {"path": "a"}}\n</tool_call>'), answer("It holds notes.")];
      server.script(...script());
      const options: Partial<AgentLoopOptions> = { dispatch: ({ name, args }) => (dispatched.push(`${name}:${JSON.stringify(args)}`), "notes") };
      const result = await run("m", options);
      expect(result.turn.content).toBe("It holds notes.");
      expect(dispatched).toEqual(['read:{"path":"a"}']);
      expect(refusals(server)).toEqual(["tools"]);
      const bodies = server.chatBodies();
      expect(bodies.slice(1).every((body) => body.tools === undefined)).toBe(true);
      expect(String((bodies[1]!.messages as Message[])[0]!.content)).toContain(TOOLS_IN_PROMPT_LEAD);
      expect(JSON.stringify(bodies[2]!.messages)).toContain("<tool_response>");
      expect(notices.some((text) => text.includes("described in the system prompt"))).toBe(true);
      await meetsNoneAgain(harness, "m", options, script);
    });
  });

  it("lets the refusal end the run where config.toolsInPrompt is false", async () => {
    await withLoop({ profile: "llama.cpp", refuse: { tools: true } }, async ({ server, run }) => {
      const failure = await run("m", { config: { baseUrl: server.baseUrl, model: "m", maxRetries: 0, toolsInPrompt: false } }).catch((error: unknown) => error);
      expect(String((failure as Error).message)).toMatch(/jinja/);
      expect(server.chatBodies()).toHaveLength(1);
    });
  });
});
