/**
 * readNotice against the notices real runs say: every sentence it knows is provoked here from
 * the loopback endpoint, so a wording that moves in the library fails this file.
 */
import { describe, expect, it } from "vitest";
import { createRuntime, type AgentLoopConfig, type AgentLoopOptions, type ToolDefinition } from "../../src/index.js";
import { readNotice, type NoticeReading } from "../../src/otel/notices.js";
import { startEndpoint, turn, type EndpointOptions, type Scripted } from "../support/endpoint.js";
import { answer, question, tool } from "./harness.js";

/** The notices one run says, against an endpoint set up as given. */
async function noticesOf(
  endpoint: EndpointOptions,
  script: Scripted[],
  options: Partial<AgentLoopOptions> = {},
  config: Partial<AgentLoopConfig> = {},
): Promise<string[]> {
  const server = await startEndpoint(endpoint);
  const runtime = createRuntime();
  const notices: string[] = [];
  try {
    server.script(...script);
    await runtime
      .runAgentLoop({
        config: { baseUrl: server.baseUrl, model: "loopback-model", maxToolIterations: 5, maxRetries: 0, ...config },
        messages: question,
        dispatch: () => "ok",
        sleep: async () => undefined,
        onNotice: (text) => notices.push(text),
        ...options,
      })
      .catch(() => undefined);
    return notices;
  } finally {
    runtime.reset();
    await server.close();
  }
}

/** The readings of the notices that were not `other`. */
const read = (notices: readonly string[]): NoticeReading[] => notices.map(readNotice).filter((reading) => reading.kind !== "other");

const strictTool: ToolDefinition = { ...tool("read"), function: { ...tool("read").function, strict: true } };

describe("readNotice", () => {
  it("reads each refusal the loop latches, with its field and scope", async () => {
    const cases: Array<[EndpointOptions["refuse"], Partial<AgentLoopConfig>, Partial<AgentLoopOptions>, NoticeReading]> = [
      [{ streamOptions: true }, {}, {}, { kind: "refusal", field: "stream_options", scope: "endpoint" }],
      [{ strict: true }, {}, { tools: [strictTool] }, { kind: "refusal", field: "strict", scope: "endpoint" }],
      [{ temperature: true }, { temperature: 0.3 }, {}, { kind: "refusal", field: "temperature", scope: "model", model: "loopback-model" }],
      [{ maxTokens: true }, { maxTokens: 100 }, {}, { kind: "refusal", field: "max_tokens", scope: "model", model: "loopback-model" }],
      [{ reasoningEffort: ["low"] }, { reasoningEffort: "low" }, {}, { kind: "refusal", field: "reasoning_effort", scope: "model", model: "loopback-model" }],
      [{ reasoningEffort: true }, { reasoningEffort: "high" }, {}, { kind: "refusal", field: "reasoning_effort", scope: "model", model: "loopback-model" }],
      [
        { fields: ["cache_prompt"] },
        { extraBody: { cache_prompt: true } },
        {},
        { kind: "refusal", field: "cache_prompt", scope: "model", model: "loopback-model" },
      ],
    ];
    for (const [refuse, config, options, expected] of cases) {
      const notices = await noticesOf({ refuse }, [answer()], options, config);
      expect(read(notices), JSON.stringify(refuse)).toEqual([expected]);
    }
  });

  it("reads a refusal of response_format from a side task's notice", async () => {
    const server = await startEndpoint({ refuse: { responseFormat: true } });
    const runtime = createRuntime();
    try {
      const notices: string[] = [];
      server.script(answer('{"title": "Notes"}'));
      await runtime.askJson(
        { baseUrl: server.baseUrl },
        "loopback-model",
        "Title it.",
        "Some notes.",
        { type: "object", properties: { title: { type: "string" } } },
        { onNotice: (text) => notices.push(text) },
      );
      expect(read(notices)).toEqual([{ kind: "refusal", field: "response_format", scope: "model", model: "loopback-model" }]);
    } finally {
      runtime.reset();
      await server.close();
    }
  });

  it("reads a retry, with its number and the failure's words", async () => {
    const busy: Scripted = { kind: "error", status: 429, body: { error: { message: "Rate limit reached" } }, headers: { "retry-after": "0" } };
    const notices = await noticesOf({}, [busy, answer()], {}, { maxRetries: 1 });
    expect(read(notices)).toEqual([{ kind: "retry", attempt: 1, failure: expect.stringContaining("Rate limit reached") }]);
  });

  it("reads the wait for a model still loading", async () => {
    const notices = await noticesOf({ profile: "llama.cpp", loading: 1 }, [answer()], {}, { loadingTimeoutSeconds: 60 });
    expect(read(notices)).toEqual([{ kind: "loading" }]);
  });

  it("reads a reply cut off at the ceiling, and each way its continuation can go", async () => {
    // Longer than the 64 characters a repeated opening must span to be read as a restart, not an echo.
    const opening = "Part one of the answer, long enough that a reply repeating its opening is a restart";
    const cut = turn({ content: opening, finishReason: "length" });
    const cases: Array<[EndpointOptions, Scripted, NoticeReading]> = [
      [{ profile: "llama.cpp" }, turn({ content: " and part two." }), { kind: "continuation", outcome: "continued", requests: 1, latched: false }],
      [
        { profile: "llama.cpp" },
        turn({ content: `${opening.slice(0, 70)}, no: again from the top.` }),
        { kind: "continuation", outcome: "started_over", latched: true },
      ],
      [{ profile: "llama.cpp", refuse: { prefill: true } }, answer("unused"), { kind: "continuation", outcome: "refused", latched: true }],
      [
        { profile: "llama.cpp" },
        { kind: "error", status: 500, body: { error: { message: "slot crashed" } } },
        { kind: "continuation", outcome: "failed", latched: false },
      ],
    ];
    for (const [endpoint, next, expected] of cases) {
      const notices = await noticesOf(endpoint, [cut, next], { maxContinuations: 1 }, { maxTokens: 5 });
      expect(read(notices), expected.kind === "continuation" ? expected.outcome : "").toEqual([{ kind: "cut-off" }, expected]);
    }
    expect(read(await noticesOf({}, [cut], {}, { maxTokens: 5 }))).toEqual([{ kind: "cut-off" }]);
    const unset = await noticesOf({}, [cut], {});
    expect(unset).toContain("The reply was cut off at the server's own token ceiling (no maxTokens was set).");
    expect(read(unset)).toEqual([{ kind: "cut-off" }]);
  });

  it("reads calls recovered from the reply's text, with their count", async () => {
    const notices = await noticesOf({}, [answer('<tool_call>\n{"name": "read", "arguments": {"path": "a"}}\n</tool_call>'), answer()], {
      tools: [tool("read")],
    });
    expect(read(notices)).toEqual([{ kind: "recovered", count: 1 }]);
  });

  it("reads the preselection, with the tools it chose", async () => {
    const notices = await noticesOf({}, [answer()], { tools: [tool("read"), tool("write"), tool("list")], preselected: ["write", "read"] });
    expect(read(notices)).toEqual([{ kind: "preselection", tools: ["write", "read"] }]);
  });

  it("leaves any other sentence as other, and never throws on what is not one", () => {
    expect(readNotice("The window is filling, but compact: true has no compaction task to write the summary, so the transcript was not folded.")).toEqual({
      kind: "other",
    });
    expect(readNotice(undefined as unknown as string)).toEqual({ kind: "other" });
    expect(readNotice("")).toEqual({ kind: "other" });
  });

  it("keeps a model name that holds the pattern's own words", async () => {
    const notices = await noticesOf(
      { refuse: { temperature: true }, models: [{ id: "refused max_tokens; model" }] },
      [answer()],
      {},
      { model: "refused max_tokens; model", temperature: 0.3 },
    );
    expect(read(notices)).toEqual([{ kind: "refusal", field: "temperature", scope: "model", model: "refused max_tokens; model" }]);
  });
});
