import { afterEach, describe, expect, it } from "vitest";
import fc from "fast-check";
import type { Message, ModelParams, ToolDefinition } from "../../src/shapes/config.js";
import { applyCombinations, declaresTools, decideCombination, readCombination } from "../../src/wire/refusal-combination.js";
import { decideRefusal } from "../../src/wire/refusal.js";
import { freshEndpointCapabilities, freshModelCapabilities, modelCapabilitiesForIn, type ModelCapabilities } from "../../src/wire/capabilities.js";
import { NegotiationError, negotiate } from "../../src/wire/negotiate.js";
import { buildBody } from "../../src/wire/request-body.js";
import { streamTurn } from "../../src/wire/stream.js";
import { buildSideTaskBody, type SideTaskRequest } from "../../src/turn/side-task-request.js";
import { clearState, createState, type RuntimeState } from "../../src/state/state.js";
import { configureKeySaltIn } from "../../src/wire/key-fingerprint.js";
import { exportCapabilities, exportCapabilitiesIn, importCapabilities, importCapabilitiesIn } from "../../src/wire/snapshot.js";
import { resetAll } from "../../src/reset.js";
import { runAgentLoop, runAgentLoopIn, type AgentLoopConfig } from "../../src/run/agent-loop.js";
import { ask, askIn } from "../../src/turn/side-task.js";
import { PROFILES, REFUSAL_KINDS, WORDING_SAMPLES, messageOf, refusalWording, startEndpoint, turn, type EndpointServer } from "../support/endpoint.js";
import { bodyFor, sendTurn, withEndpoint, type Wants } from "../support/negotiation.js";

const M = "gpt-5.4";

const TOOL: ToolDefinition = {
  type: "function",
  function: { name: "lookup", description: "Looks a word up.", parameters: { type: "object", properties: { q: { type: "string" } } } },
};

const question: Message[] = [{ role: "user", content: "Look up 'latch'." }];

/** An error as the SDK hands it over: status and the parsed body's error. */
function apiError(status: number, body: unknown): Error & { status: number; error: unknown } {
  const error = new Error(`${status} ${messageOf(body)}`) as Error & { status: number; error: unknown };
  error.status = status;
  error.error = (body as { error?: unknown }).error ?? body;
  return error;
}

function openaiWording(kind: (typeof REFUSAL_KINDS)[number], detail: Record<string, unknown> = {}): string {
  return messageOf(refusalWording(PROFILES.openai, kind).body({ model: M, ...detail }));
}

const EFFORT_WITH_TOOLS_SAMPLES = WORDING_SAMPLES.filter((sample) => sample.kind === "reasoningEffortWithTools");
const WITHOUT_TOOLS_SAMPLES = WORDING_SAMPLES.filter((sample) => sample.kind === "parallelToolCallsWithoutTools");

describe("readCombination", () => {
  it("reads OpenAI's refusal of an effort beside tools, in both wordings", () => {
    expect(readCombination(openaiWording("reasoningEffortWithTools"))).toEqual({ field: "reasoning_effort", company: "withTools" });
    expect(readCombination(openaiWording("reasoningEffortWithTools", { supported: ["none"] }))).toEqual({
      field: "reasoning_effort",
      company: "withTools",
      offered: "none",
    });
    expect(EFFORT_WITH_TOOLS_SAMPLES).toHaveLength(2);
    const read = EFFORT_WITH_TOOLS_SAMPLES.map((sample) => readCombination(messageOf(sample.body)));
    expect(read).toEqual([
      { field: "reasoning_effort", company: "withTools" },
      { field: "reasoning_effort", company: "withTools", offered: "none" },
    ]);
  });

  it("reads OpenAI's parallel_tool_calls refused without tools as a field refused without tools", () => {
    expect(readCombination(openaiWording("parallelToolCallsWithoutTools"))).toEqual({ field: "parallel_tool_calls", company: "withoutTools" });
    expect(WITHOUT_TOOLS_SAMPLES.length).toBeGreaterThan(0);
    for (const sample of WITHOUT_TOOLS_SAMPLES) {
      expect(readCombination(messageOf(sample.body))).toEqual({ field: "parallel_tool_calls", company: "withoutTools" });
    }
  });

  it("reads the same sentence about any field, and never about tools themselves", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z_][a-z0-9_]{0,30}$/), (field) => {
        const read = readCombination(`Invalid value for '${field}': '${field}' is only allowed when 'tools' are specified.`);
        if (field === "tools") expect(read).toBeUndefined();
        else expect(read).toEqual({ field, company: "withoutTools" });
      }),
    );
  });

  it("does not read any other wording as a combination", () => {
    const others = [
      ...WORDING_SAMPLES.filter((sample) => sample.kind !== "reasoningEffortWithTools" && sample.kind !== "parallelToolCallsWithoutTools").map((sample) =>
        messageOf(sample.body),
      ),
      ...REFUSAL_KINDS.filter((kind) => kind !== "reasoningEffortWithTools" && kind !== "parallelToolCallsWithoutTools").map((kind) => openaiWording(kind)),
      // Azure's and OpenAI's refusal of parallel_tool_calls for a reasoning model: the field as such, beside tools too.
      "Unsupported parameter: 'parallel_tool_calls' is not supported with this model.",
      "Unrecognized request argument supplied: parallel_tool_calls",
      "Unsupported parameter: 'tools' is not supported with this model.",
      "",
    ];
    for (const message of others) expect(readCombination(message), message).toBeUndefined();
  });

  it("never throws and reads nothing from words that lack both sentences", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const read = readCombination(text);
        if (!/only\s+(?:allowed|permitted|supported|valid)\s+when/i.test(text) && !/function tools with reasoning/i.test(text)) expect(read).toBeUndefined();
      }),
    );
  });
});

describe("declaresTools", () => {
  it("is true only for a non-empty tools array", () => {
    expect(declaresTools({ tools: [TOOL] })).toBe(true);
    expect(declaresTools({ tools: [] })).toBe(false);
    expect(declaresTools({})).toBe(false);
    expect(declaresTools(null)).toBe(false);
  });
});

describe("applyCombinations", () => {
  const record = (latches: Partial<ModelCapabilities>): ModelCapabilities => ({ ...freshModelCapabilities(), ...latches });

  it("leaves out what was refused beside tools only from a body that declares tools", () => {
    const model = record({ droppedWithTools: ["reasoning_effort"] });
    expect(applyCombinations({ model: M, messages: [], tools: [TOOL], reasoning_effort: "low" }, model)).not.toHaveProperty("reasoning_effort");
    expect(applyCombinations({ model: M, messages: [], reasoning_effort: "low" }, model)).toHaveProperty("reasoning_effort", "low");
  });

  it("leaves out what was refused without tools only from a body that declares none", () => {
    const model = record({ droppedWithoutTools: ["parallel_tool_calls"] });
    expect(applyCombinations({ model: M, messages: [], parallel_tool_calls: false }, model)).not.toHaveProperty("parallel_tool_calls");
    expect(applyCombinations({ model: M, messages: [], tools: [TOOL], parallel_tool_calls: false }, model)).toHaveProperty("parallel_tool_calls", false);
  });

  it("sends the effort the model takes beside tools in place of any other, and only beside tools", () => {
    const model = record({ effortWithTools: "none" });
    expect(applyCombinations({ model: M, messages: [], tools: [TOOL], reasoning_effort: "high" }, model).reasoning_effort).toBe("none");
    expect(applyCombinations<Record<string, unknown>>({ model: M, messages: [], tools: [TOOL] }, model).reasoning_effort).toBe("none");
    expect(applyCombinations({ model: M, messages: [], reasoning_effort: "high" }, model).reasoning_effort).toBe("high");
  });

  it("never removes the fields a request owns, and changes nothing without a record", () => {
    const model = record({ droppedWithTools: ["tools", "messages", "model", "stream"], droppedWithoutTools: ["messages"] });
    expect(applyCombinations({ model: M, messages: [], stream: true, tools: [TOOL] }, model)).toEqual({ model: M, messages: [], stream: true, tools: [TOOL] });
    expect(applyCombinations({ model: M, messages: [] }, model)).toEqual({ model: M, messages: [] });
    expect(applyCombinations({ model: M, messages: [], reasoning_effort: "low" }, undefined)).toEqual({ model: M, messages: [], reasoning_effort: "low" });
  });
});

describe("decideCombination", () => {
  const effortWords = openaiWording("reasoningEffortWithTools");
  const noneWords = openaiWording("reasoningEffortWithTools", { supported: ["none"] });
  const parallelWords = openaiWording("parallelToolCallsWithoutTools");

  it("answers an effort refused beside tools by leaving it out of tool-carrying requests", () => {
    const model = freshModelCapabilities();
    const decision = decideCombination(effortWords, model, M, [], { tools: [TOOL], reasoning_effort: "low" });
    expect(decision).toMatchObject({ kind: "answer", answers: [{ latch: "withTools:reasoning_effort", field: "reasoning_effort", already: false }] });
    expect(model.droppedWithTools).toBeUndefined();
    if (decision?.kind === "answer") decision.answers[0]!.apply();
    expect(model).toMatchObject({ droppedWithTools: ["reasoning_effort"], reasoningEffort: true, refusedEfforts: [] });
  });

  it("answers the wording that offers 'none' by sending 'none' beside tools, with or without an effort sent", () => {
    for (const sent of [{ tools: [TOOL], reasoning_effort: "high" }, { tools: [TOOL] }]) {
      const model = freshModelCapabilities();
      const decision = decideCombination(noneWords, model, M, [], sent);
      expect(decision).toMatchObject({ kind: "answer", answers: [{ latch: "withTools:effort:none", already: false }] });
      if (decision?.kind === "answer") decision.answers[0]!.apply();
      expect(model.effortWithTools).toBe("none");
    }
  });

  it("passes what it cannot help: the offered effort already sent, or no effort sent in the older wording", () => {
    expect(decideCombination(noneWords, freshModelCapabilities(), M, [], { tools: [TOOL], reasoning_effort: "none" })).toEqual({ kind: "pass" });
    expect(decideCombination(effortWords, freshModelCapabilities(), M, [], { tools: [TOOL] })).toEqual({ kind: "pass" });
  });

  it("drops a field refused without tools only where the caller marked it droppable", () => {
    const sent = { messages: [], parallel_tool_calls: false };
    expect(decideCombination(parallelWords, freshModelCapabilities(), M, [], sent)).toEqual({ kind: "pass" });
    const model = freshModelCapabilities();
    const decision = decideCombination(parallelWords, model, M, ["parallel_tool_calls"], sent);
    expect(decision).toMatchObject({ kind: "answer", answers: [{ latch: "withoutTools:parallel_tool_calls", field: "parallel_tool_calls" }] });
    if (decision?.kind === "answer") decision.answers[0]!.apply();
    expect(model).toMatchObject({ droppedWithoutTools: ["parallel_tool_calls"], droppedFields: [] });
    expect(decideCombination(parallelWords, model, M, ["parallel_tool_calls"], sent)).toMatchObject({ kind: "answer", answers: [{ already: true }] });
  });

  it("does not read a refusal as a combination where the request was not in the company its words name", () => {
    expect(decideCombination(effortWords, freshModelCapabilities(), M, [], { reasoning_effort: "low" })).toBeUndefined();
    expect(
      decideCombination(parallelWords, freshModelCapabilities(), M, ["parallel_tool_calls"], { tools: [TOOL], parallel_tool_calls: false }),
    ).toBeUndefined();
    expect(decideCombination("Unknown parameter: 'min_p'.", freshModelCapabilities(), M, ["min_p"], { min_p: 0.1 })).toBeUndefined();
  });

  it("latches nothing without a model record", () => {
    expect(decideCombination(effortWords, undefined, "", [], { tools: [TOOL], reasoning_effort: "low" })).toEqual({ kind: "pass" });
  });
});

describe("decideRefusal consults the combination first", () => {
  it("no longer latches the effort off for the whole model when it is refused beside tools", () => {
    for (const sample of EFFORT_WITH_TOOLS_SAMPLES) {
      const model = freshModelCapabilities();
      const decision = decideRefusal(apiError(sample.status, sample.body), freshEndpointCapabilities(), model, M, [], {
        tools: [TOOL],
        reasoning_effort: "low",
      });
      expect(decision.kind).toBe("answer");
      if (decision.kind === "answer") for (const answer of decision.answers) answer.apply();
      expect(model.reasoningEffort).toBe(true);
      expect(model.refusedEfforts).toEqual([]);
    }
  });

  it("reads Azure's refused 'none', which names the field only in param, as the effort ladder does", () => {
    const [azure] = WORDING_SAMPLES.filter((sample) => sample.kind === "reasoningEffort" && sample.server.startsWith("Azure"));
    const model = freshModelCapabilities();
    const decision = decideRefusal(apiError(azure!.status, azure!.body), freshEndpointCapabilities(), model, "gpt-5.1", [], { reasoning_effort: "none" });
    expect(decision).toMatchObject({ kind: "answer", answers: [{ latch: "effort:none" }] });
    if (decision.kind === "answer") for (const answer of decision.answers) answer.apply();
    expect(model.reasoningEffort).toBe(true);
    expect(model.refusedEfforts).toEqual(["none", "minimal"]);
  });

  it("passes parallel_tool_calls refused without tools where nobody marked it droppable, latching nothing", () => {
    const words = refusalWording(PROFILES.openai, "parallelToolCallsWithoutTools");
    const model = freshModelCapabilities();
    const decision = decideRefusal(apiError(words.status, words.body({ model: M })), freshEndpointCapabilities(), model, M, [], { parallel_tool_calls: false });
    expect(decision).toEqual({ kind: "pass" });
    expect(model).toEqual(freshModelCapabilities());
  });

  it("keeps the ordinary droppable rule for parallel_tool_calls refused as such, beside tools", () => {
    const body = {
      error: {
        message: "Unsupported parameter: 'parallel_tool_calls' is not supported with this model.",
        type: "invalid_request_error",
        param: "parallel_tool_calls",
        code: "unsupported_parameter",
      },
    };
    const model = freshModelCapabilities();
    const decision = decideRefusal(apiError(400, body), freshEndpointCapabilities(), model, "o3-mini", ["parallel_tool_calls"], {
      tools: [TOOL],
      parallel_tool_calls: false,
    });
    expect(decision).toMatchObject({ kind: "answer", answers: [{ latch: "drop:parallel_tool_calls" }] });
  });
});

describe("the body builders", () => {
  const request = (model: string, extra: Partial<SideTaskRequest> = {}): SideTaskRequest => ({
    endpoint: { baseUrl: "http://127.0.0.1:9/v1" },
    model,
    messages: [{ role: "user", content: "hi" }],
    temperature: undefined,
    maxTokens: undefined,
    ...extra,
  });

  it("buildBody honours both companies; a side task's body, which declares no tools, keeps the effort", () => {
    const model = { ...freshModelCapabilities(), droppedWithTools: ["reasoning_effort"], droppedWithoutTools: ["parallel_tool_calls"] };
    const config = { model: M, reasoningEffort: "low" as const, extraBody: { parallel_tool_calls: false } };
    const withTools = buildBody(config, freshEndpointCapabilities(), model, question, [TOOL]);
    expect(withTools).not.toHaveProperty("reasoning_effort");
    expect(withTools.parallel_tool_calls).toBe(false);
    const without = buildBody(config, freshEndpointCapabilities(), model, question);
    expect(without.reasoning_effort).toBe("low");
    expect(without).not.toHaveProperty("parallel_tool_calls");
    const side = buildSideTaskBody(request(M, { reasoningEffort: "high", extraBody: { parallel_tool_calls: false } }), freshEndpointCapabilities(), model);
    expect(side.reasoning_effort).toBe("high");
    expect(side).not.toHaveProperty("parallel_tool_calls");
  });
});

describe("against the loopback endpoint", () => {
  let server: EndpointServer | undefined;
  let state: RuntimeState | undefined;
  afterEach(async () => {
    if (state) clearState(state);
    state = undefined;
    resetAll();
    await server?.close();
    server = undefined;
  });

  const loopConfig = (baseUrl: string, extra: Partial<AgentLoopConfig> = {}): AgentLoopConfig => ({
    baseUrl,
    model: M,
    maxToolIterations: 4,
    maxRetries: 0,
    reasoningEffort: "low",
    ...extra,
  });

  it("re-sends the loop's tool-carrying request once without the effort, and a later tool-free side task still sends it", async () => {
    server = await startEndpoint({ profile: "openai", refuse: { models: { [M]: { reasoningEffortWithTools: true } } } });
    state = createState();
    const notices: string[] = [];
    server.script(turn({ content: "Looked up." }), turn({ content: "A short title" }));
    const result = await runAgentLoopIn(state, {
      config: loopConfig(server.baseUrl),
      messages: question,
      tools: [TOOL],
      dispatch: () => "found",
      onNotice: (message) => notices.push(message),
    });
    expect(result.turn.content).toBe("Looked up.");
    const title = await askIn(state, { baseUrl: server.baseUrl }, M, "Name this chat.", "Look up 'latch'.", { reasoningEffort: "low" });
    expect(title).toBe("A short title");
    const bodies = server.chatBodies();
    expect(bodies).toHaveLength(3);
    expect(server.chatRequests().map((entry) => entry.refused)).toEqual(["reasoningEffortWithTools", undefined, undefined]);
    expect(bodies[0]).toMatchObject({ reasoning_effort: "low" });
    expect(bodies[0]?.tools).toHaveLength(1);
    expect(bodies[1]).not.toHaveProperty("reasoning_effort");
    expect(bodies[1]?.tools).toHaveLength(1);
    expect(bodies[2]).toMatchObject({ reasoning_effort: "low" });
    expect(bodies[2]).not.toHaveProperty("tools");
    expect(notices.some((notice) => notice.includes("beside tools"))).toBe(true);
    expect(modelCapabilitiesForIn(state, server.baseUrl, undefined, M)).toMatchObject({ reasoningEffort: true, droppedWithTools: ["reasoning_effort"] });
  });

  it("sends 'none' beside tools to a model that reasons by default and offers only that", async () => {
    server = await startEndpoint({ profile: "openai", refuse: { models: { [M]: { reasoningEffortWithTools: "unless-none" } } } });
    state = createState();
    server.script(turn({ content: "Looked up." }), turn({ content: "A short title" }));
    await runAgentLoopIn(state, {
      config: loopConfig(server.baseUrl, { reasoningEffort: undefined }),
      messages: question,
      tools: [TOOL],
      dispatch: () => "found",
    });
    await askIn(state, { baseUrl: server.baseUrl }, M, "Name this chat.", "Look up 'latch'.", { reasoningEffort: "medium" });
    const bodies = server.chatBodies();
    expect(server.chatRequests().map((entry) => entry.refused)).toEqual(["reasoningEffortWithTools", undefined, undefined]);
    expect(bodies[0]).not.toHaveProperty("reasoning_effort");
    expect(bodies[1]).toMatchObject({ reasoning_effort: "none" });
    expect(bodies[2]).toMatchObject({ reasoning_effort: "medium" });
  });

  it("drops parallel_tool_calls refused without tools for the side task, and still sends it beside tools", async () => {
    server = await startEndpoint({ profile: "openai", refuse: { withoutTools: ["parallel_tool_calls"] } });
    state = createState();
    const notices: string[] = [];
    server.script(turn({ content: "A short title" }), turn({ content: "A second title" }), turn({ content: "Looked up." }));
    const endpoint = { baseUrl: server.baseUrl };
    const options = { extraBody: { parallel_tool_calls: false }, onNotice: (message: string) => notices.push(message) };
    expect(await askIn(state, endpoint, M, "Name this chat.", "Look up 'latch'.", options)).toBe("A short title");
    expect(await askIn(state, endpoint, M, "Name this chat.", "Again.", options)).toBe("A second title");
    await runAgentLoopIn(state, {
      config: loopConfig(server.baseUrl, { reasoningEffort: undefined, extraBody: { parallel_tool_calls: false } }),
      messages: question,
      tools: [TOOL],
      dispatch: () => "found",
    });
    const bodies = server.chatBodies();
    expect(server.chatRequests().map((entry) => entry.refused)).toEqual(["parallelToolCallsWithoutTools", undefined, undefined, undefined]);
    expect(bodies[0]).toHaveProperty("parallel_tool_calls", false);
    expect(bodies[1]).not.toHaveProperty("parallel_tool_calls");
    expect(bodies[2]).not.toHaveProperty("parallel_tool_calls");
    expect(bodies[3]).toMatchObject({ parallel_tool_calls: false });
    expect(bodies[3]?.tools).toHaveLength(1);
    expect(notices.filter((notice) => notice.includes("only beside tools"))).toHaveLength(1);
  });

  it("carries the combination latches through a snapshot, so a restarted runtime sends the right body first time", async () => {
    server = await startEndpoint({
      profile: "openai",
      refuse: { withoutTools: ["parallel_tool_calls"], models: { [M]: { reasoningEffortWithTools: true } } },
    });
    const config = loopConfig(server.baseUrl, { extraBody: { parallel_tool_calls: false } });
    server.script(turn({ content: "Looked up." }), turn({ content: "A title" }));
    await runAgentLoop({ config, messages: question, tools: [TOOL], dispatch: () => "found" });
    await ask({ baseUrl: server.baseUrl }, M, "Name this chat.", "Look up 'latch'.", { reasoningEffort: "low", extraBody: { parallel_tool_calls: false } });
    expect(server.chatRequests().map((entry) => entry.refused)).toEqual(["reasoningEffortWithTools", undefined, "parallelToolCallsWithoutTools", undefined]);
    const blob = JSON.parse(JSON.stringify(exportCapabilities()));
    expect(blob.endpoints[0].models[M]).toEqual({ droppedWithTools: ["reasoning_effort"], droppedWithoutTools: ["parallel_tool_calls"] });

    resetAll();
    expect(importCapabilities(blob)).toEqual({ endpoints: 1, models: 1, ignored: [] });
    server.script(turn({ content: "Looked up again." }), turn({ content: "Another title" }));
    await runAgentLoop({ config, messages: question, tools: [TOOL], dispatch: () => "found" });
    await ask({ baseUrl: server.baseUrl }, M, "Name this chat.", "Again.", { reasoningEffort: "low", extraBody: { parallel_tool_calls: false } });
    const after = server.chatRequests().slice(4);
    expect(after.map((entry) => entry.refused)).toEqual([undefined, undefined]);
    const [loopBody, sideBody] = server.chatBodies().slice(4);
    expect(loopBody).not.toHaveProperty("reasoning_effort");
    expect(loopBody).toMatchObject({ parallel_tool_calls: false });
    expect(sideBody).toMatchObject({ reasoning_effort: "low" });
    expect(sideBody).not.toHaveProperty("parallel_tool_calls");
  });
});

describe("the snapshot", () => {
  let states: RuntimeState[] = [];
  afterEach(() => {
    for (const state of states) clearState(state);
    states = [];
  });
  const fresh = (): RuntimeState => {
    const state = createState();
    // Keyed entries import only under the key salt they were exported with.
    configureKeySaltIn(state, "one salt for every state here");
    states.push(state);
    return state;
  };

  it("round-trips every combination latch and leaves a model without any as it was", () => {
    const source = fresh();
    const model = modelCapabilitiesForIn(source, "http://x/v1", "k", M);
    model.droppedWithTools = ["reasoning_effort"];
    model.droppedWithoutTools = ["parallel_tool_calls", "tool_choice"];
    model.effortWithTools = "none";
    modelCapabilitiesForIn(source, "http://x/v1", "k", "other").droppedWithTools = [];
    const blob = JSON.parse(JSON.stringify(exportCapabilitiesIn(source)));
    expect(blob.version).toBe(1);
    expect(blob.endpoints[0].models).toEqual({
      [M]: { droppedWithTools: ["reasoning_effort"], droppedWithoutTools: ["parallel_tool_calls", "tool_choice"], effortWithTools: "none" },
    });
    const target = fresh();
    expect(importCapabilitiesIn(target, blob)).toEqual({ endpoints: 1, models: 1, ignored: [] });
    expect(modelCapabilitiesForIn(target, "http://x/v1", "k", M)).toMatchObject({
      droppedWithTools: ["reasoning_effort"],
      droppedWithoutTools: ["parallel_tool_calls", "tool_choice"],
      effortWithTools: "none",
    });
    expect(exportCapabilitiesIn(target)).toEqual(exportCapabilitiesIn(source));
  });

  it("ignores what it does not understand and says where", () => {
    const state = fresh();
    const result = importCapabilitiesIn(state, {
      version: 1,
      endpoints: [
        {
          baseUrl: "http://x/v1",
          key: "",
          models: { [M]: { droppedWithTools: ["reasoning_effort", "messages", 3], droppedWithoutTools: "parallel_tool_calls", effortWithTools: "ultra" } },
        },
      ],
    });
    expect(result.ignored).toEqual([
      `endpoints[0].models["${M}"].droppedWithTools[1]: not understood`,
      `endpoints[0].models["${M}"].droppedWithTools[2]: not understood`,
      `endpoints[0].models["${M}"].droppedWithoutTools: not an array`,
      `endpoints[0].models["${M}"].effortWithTools: not understood`,
    ]);
    const model = modelCapabilitiesForIn(state, "http://x/v1", undefined, M);
    expect(model.droppedWithTools).toEqual(["reasoning_effort"]);
    expect(model.droppedWithoutTools).toBeUndefined();
    expect(model.effortWithTools).toBeUndefined();
  });

  it("imports a blob written before the combination latches as it always did", () => {
    const state = fresh();
    expect(
      importCapabilitiesIn(state, { version: 1, endpoints: [{ baseUrl: "http://x/v1", key: "", models: { [M]: { droppedFields: ["min_p"] } } }] }),
    ).toEqual({
      endpoints: 1,
      models: 1,
      ignored: [],
    });
    expect(modelCapabilitiesForIn(state, "http://x/v1", undefined, M)).toEqual({ ...freshModelCapabilities(), droppedFields: ["min_p"] });
  });
});

describe("negotiate: a field refused only beside another", () => {
  const config: ModelParams = { model: "gpt-5.4", reasoningEffort: "low" };

  it("re-sends once without the effort beside tools, latching neither the effort nor a rung off", async () => {
    await withEndpoint({ profile: "openai", refuse: { reasoningEffortWithTools: true } }, async (context) => {
      context.server.script(turn({ content: "ok" }), turn({ content: "ok" }));
      let sent: Record<string, unknown> | undefined;
      const send = (wants: Wants) =>
        negotiate(
          context.supports,
          (supports, produced, model) => {
            sent = applyCombinations(bodyFor(config, supports, model, wants), model);
            return streamTurn(context.client, sent as never, { produced });
          },
          { model: config.model, onNotice: (message) => context.notices.push(message), sentBody: () => sent },
        );
      await send({ tools: true });
      await send({});
      const bodies = context.server.chatBodies();
      expect(bodies.map((body) => body.reasoning_effort)).toEqual(["low", undefined, "low"]);
      expect(context.notices).toHaveLength(1);
      expect(context.supports.models.get("gpt-5.4")).toMatchObject({ reasoningEffort: true, refusedEfforts: [], droppedWithTools: ["reasoning_effort"] });
    });
  });

  it("ends in a NegotiationError where the send callback ignores the combination latch", async () => {
    await withEndpoint({ profile: "openai", refuse: { reasoningEffortWithTools: true } }, async (context) => {
      const failure = await sendTurn(context, config, { tools: true }).catch((error: unknown) => error);
      expect(NegotiationError.is(failure)).toBe(true);
      expect((failure as NegotiationError).attempts).toBe(2);
      expect(context.server.chatBodies()).toHaveLength(2);
    });
  });
});
