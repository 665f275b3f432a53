import { describe, expect, it } from "vitest";
import { runChildScript } from "../support/child-script.js";
import fc from "fast-check";
import type { Message, ToolDefinition } from "../../src/shapes/config.js";
import { resumeAgentLoopIn, runAgentLoopIn, type AgentLoopOptions, type AgentLoopResult, type ResumeAgentLoopOptions } from "../../src/run/agent-loop.js";
import { ApprovalDecisionError, DENIED_CALL, denialText, type ApprovalVerdict, type ApprovePolicy } from "../../src/run/approval.js";
import { RunStateError, serializeRunState, type RunState } from "../../src/run/run-state.js";
import { STOPPED_BEFORE_CALL } from "../../src/run/run-calls.js";
import { emitIn, historyIn, type RunEventInput } from "../../src/run/events.js";
import { AgentLoopError, ToolIterationLimit, failedRun } from "../../src/text/errors.js";
import { clearState, createState, type RuntimeState } from "../../src/state/state.js";
import { startEndpoint, turn, type EndpointOptions, type EndpointServer, type Scripted } from "../support/endpoint.js";
import { validateTranscript } from "../support/transcript.js";

const question: Message[] = [{ role: "user", content: "Tidy the notes and tell the team." }];

const tool = (name: string): ToolDefinition => ({
  type: "function",
  function: { name, description: `Does ${name}.`, parameters: { type: "object", properties: { path: { type: "string" } } } },
});
const tools = [tool("read"), tool("write"), tool("send")];

const calls = (...specs: Array<[string, Record<string, unknown>, string]>): Scripted =>
  turn({ toolCalls: specs.map(([name, args, id]) => ({ name, arguments: args, id })) });
const answer = (content = "Done.") => turn({ content });

/** One server, a record of what dispatch was handed, and runs and resumes on fresh runtime states. */
interface Harness {
  server: EndpointServer;
  dispatched: string[];
  options(extra?: Partial<AgentLoopOptions>): AgentLoopOptions;
  run(extra?: Partial<AgentLoopOptions>): Promise<AgentLoopResult>;
  resume(state: RunState | string, decisions: ResumeAgentLoopOptions["decisions"], extra?: Partial<AgentLoopOptions>): Promise<AgentLoopResult>;
}

async function withServer(endpoint: EndpointOptions, body: (harness: Harness) => Promise<void>, shared?: RuntimeState): Promise<void> {
  const server = await startEndpoint(endpoint);
  const states: RuntimeState[] = [];
  const fresh = () => {
    if (shared) return shared;
    const state = createState();
    states.push(state);
    return state;
  };
  const dispatched: string[] = [];
  const options = (extra: Partial<AgentLoopOptions> = {}): AgentLoopOptions => ({
    config: { baseUrl: server.baseUrl, model: "loopback-model", maxToolIterations: 20, maxRetries: 0 },
    messages: question,
    tools,
    dispatch: ({ id, name, args }) => {
      dispatched.push(id);
      return `${name} ran with ${JSON.stringify(args)}`;
    },
    ...extra,
  });
  try {
    await body({
      server,
      dispatched,
      options,
      run: (extra) => runAgentLoopIn(fresh(), options(extra)),
      resume: (state, decisions, extra) => {
        const { messages: _messages, ...rest } = options(extra);
        return resumeAgentLoopIn(fresh(), { ...rest, state, decisions: decisions ?? {} });
      },
    });
  } finally {
    for (const state of states) clearState(state);
    await server.close();
  }
}

const policy =
  (verdicts: Record<string, ApprovalVerdict>): ApprovePolicy =>
  ({ name }) =>
    verdicts[name] ?? "allow";

/** Every call's id in the transcript, and how many tool messages answer each. */
function answers(messages: readonly Message[]): Map<string, number> {
  const count = new Map<string, number>();
  for (const message of messages) {
    if (message.role === "assistant") for (const call of message.tool_calls ?? []) count.set(call.id, count.get(call.id) ?? 0);
    if (message.role === "tool") count.set(message.tool_call_id, (count.get(message.tool_call_id) ?? 0) + 1);
  }
  return count;
}

const toolMessage = (messages: readonly Message[], id: string) => messages.find((message) => message.role === "tool" && message.tool_call_id === id);

describe("a call that needs asking", () => {
  it("stops the run before it: the allowed calls run, the denied are answered, the rest wait with the state", async () => {
    await withServer({}, async ({ server, dispatched, run }) => {
      server.script(calls(["read", { path: "a" }, "c1"], ["send", { path: "b" }, "c2"], ["write", { path: "c" }, "c3"]), answer());
      const events: RunEventInput[] = [];
      const result = await run({
        parallel: true,
        approve: policy({ send: "ask", write: { deny: "writes are off today" } }),
        onEvent: (event) => events.push(event),
      });
      expect(result.status).toBe("awaiting-approval");
      expect(result.pending).toEqual([{ id: "c2", name: "send", args: { path: "b" }, raw: '{"path":"b"}' }]);
      expect(dispatched).toEqual(["c1"]);
      // Call order is kept: c3 was answered, but its message waits behind c2.
      expect(result.messages.slice(2)).toEqual([{ role: "tool", tool_call_id: "c1", content: 'read ran with {"path":"a"}' }]);
      expect(result.state!.open).toEqual([
        { kind: "held", request: { id: "c2", name: "send", args: { path: "b" }, raw: '{"path":"b"}' } },
        { kind: "answered", outcome: { id: "c3", name: "write", args: { path: "c" }, ok: false, content: `${DENIED_CALL} Reason: writes are off today` } },
      ]);
      expect(result.toolCalls.map((entry) => entry.id)).toEqual(["c1", "c3"]);
      expect(events.filter((event) => event.kind === "approval-requested")).toEqual([
        { kind: "approval-requested", id: "c2", name: "send", args: '{"path":"b"}' },
      ]);
      expect(events.filter((event) => event.kind === "approval-decided")).toEqual([
        { kind: "approval-decided", id: "c3", name: "write", approved: false, by: "policy", reason: "writes are off today" },
      ]);
      expect(events.at(-1)).toEqual({ kind: "done", outcome: "awaiting-approval" });
      expect(result.metrics).toMatchObject({ outcome: "awaiting-approval", approvalsRequested: 1, approvalsDenied: 1, approvalsGranted: 0, toolCalls: 3 });
      expect(await result.afterTurn).toEqual([]);
      expect(server.chatBodies()).toHaveLength(1);
    });
  });

  it("resumes where it stopped: the approved call runs, every answer lands in call order, nothing answered runs again", async () => {
    await withServer({}, async ({ server, dispatched, run, resume }) => {
      server.script(calls(["read", { path: "a" }, "c1"], ["send", { path: "b" }, "c2"], ["write", { path: "c" }, "c3"]), answer("Sent."));
      const approve = policy({ send: "ask", write: "deny" });
      const paused = await run({ approve });
      const events: RunEventInput[] = [];
      const result = await resume(JSON.stringify(paused.state), { c2: true }, { approve, onEvent: (event) => events.push(event) });
      expect(result.status).toBe("answered");
      expect(result.turn.content).toBe("Sent.");
      expect(dispatched).toEqual(["c1", "c2"]);
      expect(result.messages.slice(2, 5).map((message) => (message as { tool_call_id: string }).tool_call_id)).toEqual(["c1", "c2", "c3"]);
      expect(toolMessage(result.messages, "c3")!.content).toBe(DENIED_CALL);
      expect(validateTranscript(result.messages)).toEqual([]);
      expect(result.toolCalls.map((entry) => entry.id)).toEqual(["c1", "c3", "c2"]);
      expect(result.used).toEqual(["read", "send"]);
      expect(events[0]).toEqual({ kind: "resumed", step: 0, pending: 1 });
      expect(events[1]).toEqual({ kind: "approval-decided", id: "c2", name: "send", approved: true, by: "person" });
      expect(events.some((event) => event.kind === "tool-call")).toBe(false);
      expect(result.metrics).toMatchObject({ outcome: "answered", resumes: 1, approvalsGranted: 1, turns: 1 });
      expect(server.chatBodies()).toHaveLength(2);
    });
  });

  for (const [label, decisions] of [
    ["approved", { a: true, b: true, c: true }],
    ["denied", { a: { deny: "no" }, b: { deny: "not now" }, c: { deny: "" } }],
    ["mixed", { a: { deny: "no" }, b: true, c: { deny: "never" } }],
  ] as const) {
    it(`leaves a valid transcript, every call answered once, with all three parallel calls ${label}`, async () => {
      await withServer({}, async ({ server, dispatched, run, resume }) => {
        server.script(calls(["read", { path: "1" }, "a"], ["write", { path: "2" }, "b"], ["send", { path: "3" }, "c"]), answer());
        const approve = () => "ask" as const;
        const paused = await run({ parallel: true, approve });
        expect(paused.pending.map((call) => call.id)).toEqual(["a", "b", "c"]);
        expect(dispatched).toEqual([]);
        const result = await resume(serializeRunState(paused.state!), decisions, { parallel: true, approve });
        expect(validateTranscript(result.messages)).toEqual([]);
        expect([...answers(result.messages).values()]).toEqual([1, 1, 1]);
        for (const [id, decision] of Object.entries(decisions)) {
          const content = toolMessage(result.messages, id)!.content;
          if (decision === true) expect(content).toMatch(/ran with/);
          else expect(content).toBe(denialText(decision.deny));
        }
        expect(dispatched.sort()).toEqual(Object.keys(decisions).filter((id) => decisions[id as keyof typeof decisions] === true));
        for (const body of server.chatBodies()) expect(validateTranscript(body.messages)).toEqual([]);
      });
    });
  }

  it("keeps waiting on the calls a resume leaves undecided, and answers them when decided", async () => {
    await withServer({}, async ({ dispatched, server, run, resume }) => {
      server.script(calls(["read", {}, "a"], ["write", {}, "b"], ["send", {}, "c"]), answer());
      const approve = () => "ask" as const;
      const paused = await run({ approve });
      const again = await resume(paused.state!, { b: true }, { approve });
      expect(again.status).toBe("awaiting-approval");
      expect(again.pending.map((call) => call.id)).toEqual(["a", "c"]);
      expect(dispatched).toEqual(["b"]);
      expect(again.messages).toHaveLength(2);
      expect(again.state!.open.map((entry) => entry.kind)).toEqual(["held", "answered", "held"]);
      const done = await resume(again.state!, { a: true, c: { deny: "later" } }, { approve });
      expect(done.status).toBe("answered");
      expect(dispatched).toEqual(["b", "a"]);
      expect(done.messages.slice(2, 5).map((message) => (message as { tool_call_id: string }).tool_call_id)).toEqual(["a", "b", "c"]);
      expect(server.chatBodies()).toHaveLength(2);
    });
  });

  it("goes on asking on the steps after a resume, with the same policy", async () => {
    await withServer({}, async ({ server, run, resume }) => {
      server.script(calls(["send", {}, "a"]), calls(["send", {}, "b"]), answer());
      const approve = policy({ send: "ask" });
      const first = await run({ approve });
      const second = await resume(first.state!, { a: true }, { approve });
      expect(second.status).toBe("awaiting-approval");
      expect(second.pending.map((call) => call.id)).toEqual(["b"]);
      expect(second.state!.step).toBe(1);
      const third = await resume(second.state!, { b: true }, { approve });
      expect(third.status).toBe("answered");
      expect(validateTranscript(third.messages)).toEqual([]);
    });
  });

  it("is the tool a call_tool names, and the loop's own load_tools is never asked about", async () => {
    await withServer({}, async ({ server, run }) => {
      server.script(calls(["load_tools", { names: ["send"] }, "l1"], ["call_tool", { name: "send", arguments: { path: "x" } }, "p1"]), answer());
      const asked: string[] = [];
      const result = await run({
        config: { baseUrl: server.baseUrl, model: "loopback-model", maxToolIterations: 5, maxRetries: 0, toolDiscovery: "proxy" },
        approve: (call) => {
          asked.push(`${call.name} ${JSON.stringify(call.args)}`);
          return "ask";
        },
      });
      expect(asked).toEqual(['send {"path":"x"}']);
      expect(result.pending).toEqual([{ id: "p1", name: "send", args: { path: "x" }, raw: '{"path":"x"}' }]);
    });
  });

  it("waits for a person where the policy throws or answers out of turn, saying so for a throw", async () => {
    await withServer({}, async ({ server, dispatched, run }) => {
      server.script(calls(["read", {}, "a"], ["write", {}, "b"]), answer());
      const notices: string[] = [];
      const result = await run({
        approve: ({ name }) => {
          if (name === "read") throw new Error("policy store down");
          return "maybe" as never;
        },
        onNotice: (text) => notices.push(text),
      });
      expect(result.pending.map((call) => call.id)).toEqual(["a", "b"]);
      expect(dispatched).toEqual([]);
      expect(notices.some((text) => text.includes("policy store down"))).toBe(true);
    });
  });

  it("counts the resumed step against maxToolIterations as the uninterrupted run would", async () => {
    await withServer({}, async ({ server, dispatched, run, resume }) => {
      server.script(calls(["send", {}, "a"]), answer());
      const approve = policy({ send: "ask" });
      const config = { baseUrl: server.baseUrl, model: "loopback-model", maxToolIterations: 1, maxRetries: 0 };
      const paused = await run({ approve, config });
      const error = await resume(paused.state!, { a: true }, { approve, config }).catch((caught: unknown) => caught);
      expect(ToolIterationLimit.is(error)).toBe(true);
      expect(dispatched).toEqual(["a"]);
      expect(validateTranscript(failedRun(error)!.messages)).toEqual([]);
      expect(server.chatBodies()).toHaveLength(1);
    });
  });

  it("answers the waiting calls as not run when a resume is stopped, leaving a valid transcript", async () => {
    await withServer({}, async ({ server, dispatched, run, resume }) => {
      server.script(calls(["read", {}, "a"], ["send", {}, "b"]), answer());
      const approve = () => "ask" as const;
      const paused = await run({ approve });
      const stop = new AbortController();
      stop.abort(new Error("the person left"));
      const error = await resume(paused.state!, { a: true }, { approve, signal: stop.signal }).catch((caught: unknown) => caught);
      expect(AgentLoopError.is(error)).toBe(true);
      const messages = failedRun(error)!.messages;
      expect(validateTranscript(messages)).toEqual([]);
      expect(toolMessage(messages, "b")!.content).toBe(STOPPED_BEFORE_CALL);
      expect(dispatched).toEqual([]);
      expect(server.chatBodies()).toHaveLength(1);
    });
  });

  it("shows on the bus as the run's events: approval-requested before done, and a resumed run's own", async () => {
    await withServer({}, async ({ server, run, resume }) => {
      const bus = createState();
      server.script(calls(["send", { path: "p" }, "a"]), answer());
      const approve = policy({ send: "ask" });
      const paused = await run({ approve, onEvent: (event) => emitIn(bus, "leg-1", event) });
      await resume(paused.state!, { a: { deny: "wrong person" } }, { approve, onEvent: (event) => emitIn(bus, "leg-2", event) });
      const kinds = (runId: string) => historyIn(bus, runId).map((event) => event.kind);
      expect(kinds("leg-1").filter((kind) => kind !== "usage")).toEqual(["tool-call", "approval-requested", "done"]);
      expect(historyIn(bus, "leg-1").at(-1)).toMatchObject({ kind: "done", outcome: "awaiting-approval" });
      expect(kinds("leg-2").slice(0, 3)).toEqual(["resumed", "approval-decided", "tool-result"]);
      expect(historyIn(bus, "leg-2")[1]).toMatchObject({ kind: "approval-decided", approved: false, by: "person", reason: "wrong person" });
      clearState(bus);
    });
  });
});

describe("resumeAgentLoop's refusals", () => {
  async function pausedState(harness: Harness): Promise<RunState> {
    harness.server.script(calls(["read", {}, "a"], ["send", {}, "b"]), answer());
    return (await harness.run({ approve: policy({ send: "ask" }) })).state!;
  }

  it("refuses decisions for ids nothing waits on, or that are neither true nor { deny }, running nothing", async () => {
    await withServer({}, async (harness) => {
      const state = await pausedState(harness);
      const before = harness.server.chatBodies().length;
      const unknown = await harness.resume(state, { b: true, zz: true }).catch((caught: unknown) => caught);
      expect(ApprovalDecisionError.is(unknown)).toBe(true);
      expect(unknown).toMatchObject({ unknownIds: ["zz"], malformedIds: [], pendingIds: ["b"] });
      expect((unknown as Error).message).toContain("zz");
      const malformed = await harness.resume(state, { b: "yes" as never }).catch((caught: unknown) => caught);
      expect(malformed).toMatchObject({ name: "ApprovalDecisionError", malformedIds: ["b"] });
      expect(harness.dispatched).toEqual(["a"]);
      expect(harness.server.chatBodies()).toHaveLength(before);
    });
  });

  it("refuses a state from a newer version, and one whose transcript was edited so a call is unanswered, running nothing", async () => {
    await withServer({}, async (harness) => {
      const state = await pausedState(harness);
      const newer = await harness.resume({ ...state, version: 2 } as never, { b: true }).catch((caught: unknown) => caught);
      expect(RunStateError.is(newer)).toBe(true);
      expect(newer).toMatchObject({ problem: "version", version: 2 });
      expect((newer as Error).message).toMatch(/newer version/);
      const edited = { ...state, messages: state.messages.filter((message) => message.role !== "tool") };
      const unanswered = await harness.resume(edited, { b: true }).catch((caught: unknown) => caught);
      expect(unanswered).toMatchObject({ name: "RunStateError", problem: "transcript" });
      expect((unanswered as Error).message).toContain("a");
      const junk = await harness.resume("{not json", { b: true }).catch((caught: unknown) => caught);
      expect(junk).toMatchObject({ name: "RunStateError", problem: "unreadable" });
      expect(harness.dispatched).toEqual(["a"]);
      expect(harness.server.chatBodies()).toHaveLength(1);
    });
  });
});

/** Resumes a state in a second Node process, through a fresh runtime there. */
function resumeInChild(input: Record<string, unknown>): Promise<{ status: string; messages: Message[]; pending: unknown[]; dispatched: string[] }> {
  return runChildScript("resume-child.ts", input);
}

describe("a pause that survives the process", () => {
  const plan = () => [
    calls(["read", { path: "notes" }, "c1"]),
    calls(["send", { path: "team" }, "c2"], ["read", { path: "log" }, "c3"]),
    calls(["write", { path: "summary" }, "c4"]),
    answer("Told the team."),
  ];

  it("resumes in a second Node process with a fresh runtime, sending what the uninterrupted run sent and running nothing twice", async () => {
    let uninterrupted: Array<Record<string, unknown>> = [];
    await withServer({}, async ({ server, run }) => {
      server.script(...plan());
      const result = await run();
      expect(result.status).toBe("answered");
      uninterrupted = server.chatBodies();
    });
    await withServer({}, async ({ server, dispatched, run }) => {
      server.script(...plan());
      const paused = await run({ approve: policy({ send: "ask" }) });
      expect(paused.status).toBe("awaiting-approval");
      expect(dispatched).toEqual(["c1", "c3"]);
      const child = await resumeInChild({ baseUrl: server.baseUrl, state: JSON.stringify(paused.state), decisions: { c2: true }, tools, ask: ["send"] });
      expect(child.status).toBe("answered");
      expect(child.dispatched).toEqual(["c2", "c4"]);
      expect(new Set([...dispatched, ...child.dispatched]).size).toBe(dispatched.length + child.dispatched.length);
      expect(validateTranscript(child.messages)).toEqual([]);

      const bodies = server.chatBodies();
      expect(bodies).toHaveLength(4);
      // No request carries a call's result twice.
      for (const body of bodies) expect([...answers(body.messages as Message[]).values()].every((count) => count === 1)).toBe(true);
      // The request after the resume is the one before the pause, the step's reply and its results in call order.
      const before = bodies[1]!.messages as Message[];
      const after = bodies[2]!.messages as Message[];
      expect(after.slice(0, before.length)).toEqual(before);
      expect(after.slice(before.length).map((message) => message.role)).toEqual(["assistant", "tool", "tool"]);
      expect(after.slice(before.length + 1).map((message) => (message as { tool_call_id: string }).tool_call_id)).toEqual(["c2", "c3"]);
      // And every request is the one the uninterrupted run sent.
      expect(bodies).toEqual(uninterrupted);
    });
  }, 60_000);

  it("keeps the prompt cache's verdict and the ledger's epoch across the resume", async () => {
    let straight: AgentLoopResult | undefined;
    await withServer({ prefixCache: true }, async ({ server, run }) => {
      server.script(...plan());
      straight = await run();
    });
    await withServer({ prefixCache: true }, async ({ server, run, resume }) => {
      server.script(...plan());
      const approve = policy({ send: "ask" });
      const paused = await run({ approve });
      const resumed = await resume(JSON.stringify(paused.state), { c2: true }, { approve });
      const first = resumed.metrics.turnMetrics[0]!;
      expect(first.cacheExpected).toBe(straight!.metrics.turnMetrics[2]!.cacheExpected);
      expect(first.cacheBroken).toBe(false);
      expect(resumed.ledger).toEqual(straight!.ledger);
      expect(resumed.usage).toEqual(straight!.usage);
    });
  });
});

describe("a resumed run's requests", () => {
  const catalog = [{ name: "desk", tools: ["read", "write", "send"].map((name) => ({ name, description: `Does ${name}.` })) }];
  const cases: Array<{ label: string; extra: Partial<AgentLoopOptions>; plan: () => Scripted[] }> = [
    {
      label: "on-demand, with a tool loaded before the pause",
      extra: { catalog, config: { baseUrl: "", model: "loopback-model", maxToolIterations: 20, maxRetries: 0, toolDiscovery: "ondemand" } },
      plan: () => [calls(["load_tools", { names: ["send", "read"] }, "l1"]), calls(["send", { path: "x" }, "s1"], ["read", { path: "y" }, "r1"]), answer()],
    },
    {
      label: "proxied",
      extra: { catalog, config: { baseUrl: "", model: "loopback-model", maxToolIterations: 20, maxRetries: 0, toolDiscovery: "proxy" } },
      plan: () => [
        calls(["call_tool", { name: "send", arguments: { path: "x" } }, "s1"], ["call_tool", { name: "read", arguments: { path: "y" } }, "r1"]),
        answer(),
      ],
    },
    {
      label: "with hook context on the question and a system prompt",
      extra: { system: "Be brief.", hooks: { run: async () => [{ hook: "memory", ok: true, context: "The team is four people." }], preface: "Background:" } },
      plan: () => [calls(["read", { path: "y" }, "r1"], ["send", { path: "x" }, "s1"]), calls(["write", {}, "w1"]), answer()],
    },
  ];

  for (const { label, extra, plan } of cases) {
    it(`are the uninterrupted run's, ${label}`, async () => {
      const withEndpoint = (baseUrl: string): Partial<AgentLoopOptions> => (extra.config ? { ...extra, config: { ...extra.config, baseUrl } } : extra);
      let uninterrupted: Array<Record<string, unknown>> = [];
      let straight: AgentLoopResult | undefined;
      await withServer({}, async ({ server, run }) => {
        server.script(...plan());
        straight = await run(withEndpoint(server.baseUrl));
        uninterrupted = server.chatBodies();
      });
      await withServer({}, async ({ server, run, resume }) => {
        server.script(...plan());
        const approve = policy({ send: "ask" });
        const paused = await run({ ...withEndpoint(server.baseUrl), approve });
        expect(paused.status).toBe("awaiting-approval");
        const resumed = await resume(serializeRunState(paused.state!), { s1: true }, { ...withEndpoint(server.baseUrl), approve });
        expect(resumed.status).toBe("answered");
        expect(server.chatBodies()).toEqual(uninterrupted);
        expect(resumed.messages).toEqual(straight!.messages);
        // The same tools, in the order they were really used: the approved call ran after the pause.
        expect([...resumed.loaded].sort()).toEqual([...straight!.loaded].sort());
        expect([...resumed.used].sort()).toEqual([...straight!.used].sort());
        expect(resumed.context).toBe(straight!.context);
      });
    });
  }
});

describe("pausing at a random step of a random plan", () => {
  it("always ends in a transcript that validates, each call run at most once, whatever is decided", async () => {
    const shared = createState();
    const verdict = fc.constantFrom<ApprovalVerdict>("allow", "allow", "deny", "ask", "ask");
    const decision = fc.constantFrom<"approve" | "deny" | "wait">("approve", "deny", "wait");
    const step = fc.array(fc.record({ name: fc.constantFrom("read", "write", "send"), path: fc.string({ maxLength: 8 }), verdict }), {
      minLength: 1,
      maxLength: 3,
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.array(decision, { minLength: 12, maxLength: 12 }),
        async (steps, parallel, choices) => {
          await withServer(
            {},
            async ({ server, dispatched, run, resume }) => {
              const verdicts = new Map<string, ApprovalVerdict>();
              server.script(
                ...steps.map((calls_, at) =>
                  turn({
                    toolCalls: calls_.map((entry, index) => {
                      const id = `s${at}c${index}`;
                      verdicts.set(id, entry.verdict);
                      return { id, name: entry.name, arguments: { path: entry.path } };
                    }),
                  }),
                ),
                answer(),
              );
              const approve: ApprovePolicy = ({ id }) => verdicts.get(id) ?? "allow";
              let result = await run({ parallel, approve });
              let legs = 0;
              while (result.status === "awaiting-approval") {
                legs += 1;
                const decisions: Record<string, true | { deny: string }> = {};
                result.pending.forEach((call, index) => {
                  const choice = legs > 3 ? "approve" : choices[(legs * 3 + index) % choices.length]!;
                  if (choice === "approve") decisions[call.id] = true;
                  else if (choice === "deny") decisions[call.id] = { deny: `not ${call.name}` };
                });
                result = await resume(JSON.stringify(result.state), decisions, { parallel, approve });
              }
              expect(validateTranscript(result.messages)).toEqual([]);
              const counts = answers(result.messages);
              expect([...counts.values()].every((count) => count === 1)).toBe(true);
              expect(counts.size).toBe(steps.reduce((sum, calls_) => sum + calls_.length, 0));
              expect(new Set(dispatched).size).toBe(dispatched.length);
              for (const id of dispatched) expect(verdicts.get(id)).not.toBe("deny");
              expect(server.chatBodies()).toHaveLength(steps.length + 1);
              for (const body of server.chatBodies()) expect(validateTranscript(body.messages)).toEqual([]);
            },
            shared,
          );
        },
      ),
      { numRuns: 30 },
    );
    clearState(shared);
  });
});
