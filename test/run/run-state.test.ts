import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { RUN_STATE_VERSION, RunStateError, parseRunState, serializeRunState, type RunState } from "../../src/run/run-state.js";
import { AgentCoreError } from "../../src/text/error-base.js";

const call = (id: string, name: string) => ({ id, type: "function" as const, function: { name, arguments: "{}" } });

/** A state paused on call b of a step whose call a was answered. */
function pausedState(): RunState {
  return {
    version: RUN_STATE_VERSION,
    step: 1,
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Tidy up." },
      { role: "assistant", content: "", tool_calls: [call("x", "read")] },
      { role: "tool", tool_call_id: "x", content: "notes" },
      { role: "assistant", content: null, tool_calls: [call("a", "read"), call("b", "send"), call("c", "write")] },
      { role: "tool", tool_call_id: "a", content: "more notes" },
    ],
    open: [
      { kind: "held", request: { id: "b", name: "send", args: { to: "team" }, raw: '{"to":"team"}' } },
      { kind: "answered", outcome: { id: "c", name: "write", args: {}, ok: true, content: "written", durationMs: 3 } },
    ],
    turn: {
      content: "",
      toolCalls: [call("a", "read"), call("b", "send"), call("c", "write")],
      usage: { prompt: 40, completion: 9, total: 49, cached: 0 },
      finishReason: "tool_calls",
      reasoning: "",
    },
    question: 1,
    hooks: { context: "<context>today</context>", preface: "Context:" },
    shortlist: [],
    tools: { loaded: ["read"], recent: ["read"] },
    used: ["read", "write"],
    toolCalls: [
      { id: "x", name: "read", args: {}, ok: true, content: "notes" },
      { id: "a", name: "read", args: {}, ok: true, content: "more notes" },
      { id: "c", name: "write", args: {}, ok: true, content: "written", durationMs: 3 },
    ],
    usage: { prompt: 70, completion: 14, total: 84, cached: 12 },
    ledger: [
      { through: 1, prompt: 30, epoch: 0 },
      { through: 3, prompt: 40, epoch: 0 },
    ],
    budget: { used: 40 },
    cache: {
      sent: { messages: 4, head: 1, system: "0".repeat(32), history: "1".repeat(32), tools: "2".repeat(32), prompt: 40, completion: 9 },
      recorded: { messages: 4, transcript: "3".repeat(32), system: "4".repeat(32), tools: "5".repeat(32) },
    },
    compactionWarned: false,
  };
}

function refusal(input: unknown): RunStateError {
  try {
    parseRunState(input);
  } catch (error) {
    if (RunStateError.is(error)) return error;
    throw error;
  }
  throw new Error("parseRunState accepted it");
}

describe("serializeRunState and parseRunState", () => {
  it("carry a state through JSON text unchanged", () => {
    const state = pausedState();
    expect(parseRunState(serializeRunState(state))).toEqual(state);
    expect(JSON.parse(serializeRunState(state))).toEqual(state);
  });

  it("read the object as well as its text, handing back a copy that shares nothing with it", () => {
    const state = pausedState();
    const read = parseRunState(state);
    expect(read).toEqual(state);
    expect(read).not.toBe(state);
    expect(read.messages[0]).not.toBe(state.messages[0]);
  });
});

describe("parseRunState's refusals", () => {
  it("are RunStateErrors, part of the package's error family", () => {
    const error = refusal("{");
    expect(error).toBeInstanceOf(AgentCoreError);
    expect(AgentCoreError.is(error)).toBe(true);
    expect(error.name).toBe("RunStateError");
  });

  it("call text that is not JSON, a value that is not an object, and a value JSON cannot hold unreadable", () => {
    expect(refusal("{not json")).toMatchObject({ problem: "unreadable", details: ["the text is not JSON"] });
    expect(refusal([pausedState()])).toMatchObject({ problem: "unreadable", details: ["the state is not an object"] });
    expect(refusal(5)).toMatchObject({ problem: "unreadable" });
    const cyclic: Record<string, unknown> = { ...pausedState() };
    cyclic.self = cyclic;
    expect(refusal(cyclic)).toMatchObject({ problem: "unreadable", details: ["the value cannot be written as JSON"] });
    expect(refusal({ ...pausedState(), step: 10n } as never)).toMatchObject({ problem: "unreadable" });
  });

  it("say a state from a newer version is from a newer version, and name a missing one", () => {
    const newer = refusal({ ...pausedState(), version: RUN_STATE_VERSION + 1 });
    expect(newer).toMatchObject({ problem: "version", version: RUN_STATE_VERSION + 1 });
    expect(newer.message).toContain("newer version of this package");
    const { version: _version, ...unversioned } = pausedState();
    expect(refusal(unversioned).details).toEqual([`the state's version is missing, not ${RUN_STATE_VERSION}`]);
    expect(refusal({ ...pausedState(), version: "1" }).problem).toBe("version");
  });

  it("name each field out of shape by where it is", () => {
    const state = pausedState() as unknown as Record<string, unknown>;
    const messages = structuredClone(state.messages) as Array<Record<string, unknown>>;
    (messages[4]!.tool_calls as Array<Record<string, unknown>>)[1]!.id = 7;
    const error = refusal({
      ...state,
      step: -1,
      messages,
      open: [{ kind: "pending" }],
      question: 0,
      ledger: [{ through: 99, prompt: 5, epoch: 0 }],
      budget: { used: "a lot" },
      tools: { loaded: [1] },
    });
    expect(error.problem).toBe("shape");
    expect(error.details).toEqual(
      expect.arrayContaining([
        "step: not a whole number",
        "messages[4].tool_calls[1].id: not a string",
        "open[0]: neither held nor answered",
        "question: messages[0] is not a user message",
        "ledger[0].through: past the transcript's end",
        "budget: not a budget",
        "tools: not the loaded and recent names",
      ]),
    );
  });

  it("refuse a transcript edited so that a call is unanswered, answered twice, or answered where none was made", () => {
    const state = pausedState();
    const without = { ...state, messages: state.messages.filter((message) => !(message.role === "tool" && message.tool_call_id === "x")) };
    expect(refusal(without)).toMatchObject({ problem: "transcript", details: ["messages[2] leaves x unanswered"] });
    const twice = {
      ...state,
      messages: [...state.messages.slice(0, 4), { role: "tool" as const, tool_call_id: "x", content: "again" }, ...state.messages.slice(4)],
    };
    expect(refusal(twice).details[0]).toMatch(/answers x, which messages\[2\] did not make or was already answered/);
    const stray = {
      ...state,
      messages: [...state.messages.slice(0, 2), { role: "tool" as const, tool_call_id: "q", content: "?" }, ...state.messages.slice(2)],
    };
    expect(refusal(stray).details[0]).toMatch(/answers q, which no call just before it made/);
  });

  it("refuse open calls that are not exactly the paused step's unanswered ones, in call order", () => {
    const state = pausedState();
    expect(refusal({ ...state, open: [state.open[1]!, state.open[0]!] }).details).toEqual([
      "the paused step's unanswered calls are b, c, but the open calls are c, b",
    ]);
    expect(refusal({ ...state, open: [state.open[0]!] }).problem).toBe("transcript");
    const answeredTwice = { ...state, messages: [...state.messages, { role: "tool" as const, tool_call_id: "b", content: "sent" }] };
    expect(refusal(answeredTwice).details).toEqual(["the paused step's unanswered calls are c, but the open calls are b, c"]);
    const after = { ...state, messages: [...state.messages, { role: "user" as const, content: "and?" }] };
    expect(refusal(after).details).toContain("messages[6] comes after the paused step's calls");
    const noStep = { ...state, messages: state.messages.slice(0, 2), open: [], ledger: [], question: 1 };
    expect(refusal(noStep).details).toEqual(["the transcript has no step with calls to resume"]);
  });

  it("never throw anything but a RunStateError, whatever they are handed", () => {
    const keys = Object.keys(pausedState());
    const mutated = fc.record({ key: fc.constantFrom(...keys), value: fc.anything() }).map(({ key, value }) => ({ ...pausedState(), [key]: value }));
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.json(), mutated), (input) => {
        try {
          const read = parseRunState(input);
          expect(read.version).toBe(RUN_STATE_VERSION);
        } catch (error) {
          expect(RunStateError.is(error)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});
