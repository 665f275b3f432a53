import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { AgentLoopError, AgentLoopOverflow, ToolIterationLimit, errorMessage, failedRun, type FailedRun } from "../../src/text/errors.js";
import { ContextOverflow } from "../../src/text/retry.js";

describe("errorMessage", () => {
  it("gives an Error's own message", () => {
    expect(errorMessage(new Error("disk full"))).toBe("disk full");
  });

  it("keeps a string as it is, on one line", () => {
    expect(errorMessage("line one\nline two")).toBe("line one line two");
  });

  it("reads the message out of an OpenAI-shaped body", () => {
    expect(errorMessage({ error: { message: "Unknown parameter: 'min_p'.", type: "invalid_request_error" } })).toBe(
      "Unknown parameter: 'min_p'.",
    );
  });

  it("falls back to JSON for an object with no message-like field", () => {
    expect(errorMessage({ status: 418 })).toBe('{"status":418}');
  });

  it("never answers an empty string", () => {
    expect(errorMessage(undefined)).toBe("Unknown error");
    expect(errorMessage("")).toBe("Unknown error");
    expect(errorMessage(new Error(""))).toBe("Error");
  });

  it("holds a huge message to 2,000 characters", () => {
    const text = errorMessage("x".repeat(50_000));
    expect(text.length).toBe(2000);
    expect(text.endsWith("…")).toBe(true);
  });

  it("survives cycles and hostile getters", () => {
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    expect(typeof errorMessage(cyclic)).toBe("string");
    const hostile = Object.defineProperty({}, "message", {
      get() {
        throw new Error("boom");
      },
    });
    expect(typeof errorMessage(hostile)).toBe("string");
  });

  it("never throws and never answers empty on any value", () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const text = errorMessage(value);
        return typeof text === "string" && text.length > 0 && text.length <= 2000;
      }),
    );
  });
});


const run: FailedRun = {
  messages: [{ role: "user", content: "hi" }],
  usage: { prompt: 10, completion: 2, total: 12, cached: 0 },
  toolCalls: [],
  loaded: ["read"],
  used: [],
  preselected: ["read"],
  ledger: [],
};

describe("AgentLoopError", () => {
  it("takes the message of what was caught and keeps it as the cause", () => {
    const cause = new Error("socket hang up");
    const error = new AgentLoopError({ cause, run });
    expect(error.message).toBe("socket hang up");
    expect(error.cause).toBe(cause);
    expect(error.name).toBe("AgentLoopError");
    expect(AgentLoopError.is(error)).toBe(true);
  });

  it("reads a message out of a rejection that is not an Error", () => {
    expect(new AgentLoopError({ cause: { error: { message: "nope" } }, run }).message).toBe("nope");
    expect(new AgentLoopError({ cause: undefined, run }).message).toBe("Unknown error");
  });

  it("keeps the run off the enumerable fields, so logging the error stays short", () => {
    expect(Object.keys(new AgentLoopError({ cause: "x", run }))).not.toContain("run");
  });
});

describe("ToolIterationLimit", () => {
  it("says the budget it spent and carries the run", () => {
    const error = new ToolIterationLimit({ limit: 8, run });
    expect(error.limit).toBe(8);
    expect(error.message).toContain("8 tool iterations");
    expect(failedRun(error)).toBe(run);
    expect(ToolIterationLimit.is(error)).toBe(true);
    expect(ToolIterationLimit.is(new AgentLoopError({ cause: "x", run }))).toBe(false);
  });
});

describe("AgentLoopOverflow", () => {
  it("is a ContextOverflow with the overflow's numbers, words and cause", () => {
    const overflow = new ContextOverflow({ source: "guard", limit: 100, requested: 140 });
    const error = new AgentLoopOverflow({ cause: overflow, run });
    expect(error).toBeInstanceOf(ContextOverflow);
    expect(ContextOverflow.is(error)).toBe(true);
    expect(AgentLoopOverflow.is(error)).toBe(true);
    expect(error.name).toBe("AgentLoopOverflow");
    expect(error.message).toBe(overflow.message);
    expect(error.limit).toBe(100);
    expect(error.requested).toBe(140);
    expect(error.source).toBe("guard");
    expect(error.cause).toBe(overflow);
    expect(failedRun(error)?.preselected).toEqual(["read"]);
  });
});

describe("failedRun", () => {
  it("reads the run off each of the loop's errors", () => {
    expect(failedRun(new AgentLoopError({ cause: "x", run }))).toBe(run);
    expect(failedRun(new ToolIterationLimit({ limit: 1, run }))).toBe(run);
  });

  it("reads the run off a copy from another package instance by name", () => {
    const foreign = Object.assign(new Error("stop"), { name: "AgentLoopError", run });
    expect(failedRun(foreign)).toBe(run);
  });

  it("answers undefined for anything else, without throwing", () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        expect(failedRun(value)).toBeUndefined();
      }),
      { numRuns: 200 },
    );
    expect(failedRun(new Error("plain"))).toBeUndefined();
    expect(failedRun(new ContextOverflow())).toBeUndefined();
  });
});
