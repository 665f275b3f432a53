import { beforeAll, describe, expect, expectTypeOf, it, vi } from "vitest";
import fc from "fast-check";
import { AgentCoreError, AgentLoopError, AgentLoopOverflow, ToolIterationLimit, errorMessage, failedRun, type FailedRun } from "../../src/text/errors.js";
import { ContextOverflow } from "../../src/text/context-overflow.js";
import { EndpointSilent } from "../../src/text/endpoint-silent.js";
import type * as PackageModule from "../../src/index.js";

describe("errorMessage", () => {
  it("gives an Error's own message", () => {
    expect(errorMessage(new Error("disk full"))).toBe("disk full");
  });

  it("keeps a string as it is, on one line", () => {
    expect(errorMessage("line one\nline two")).toBe("line one line two");
  });

  it("reads the message out of an OpenAI-shaped body", () => {
    expect(errorMessage({ error: { message: "Unknown parameter: 'min_p'.", type: "invalid_request_error" } })).toBe("Unknown parameter: 'min_p'.");
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

/** The package's public entry, as a host imports it. */
type Package = typeof PackageModule;

/** An error class as the tests below handle it, looked up on a copy of the package by name. */
interface ErrorClass {
  new (...args: never[]): Error;
  is(value: unknown): boolean;
}

/** What a test passes to a case's constructor besides the case's own fields. */
interface Extra {
  cause?: unknown;
  message?: string;
}

interface Case {
  /** The class's name, which is also its export's name. */
  name: string;
  /** The names its marker lists, most specific first. */
  chain: string[];
  /** Builds the error in the given copy of the package. */
  make: (copy: Package, extra: Extra) => Error;
  /** The fields the error must carry. */
  fields: Record<string, unknown>;
  /** Where the cause handed in ends up; the error's own `cause` unless said. */
  causeOf?: (error: Error) => unknown;
}

const MARKER = Symbol.for("@cubicecho/agent-core/error");

const cases: Case[] = [
  {
    name: "ContextOverflow",
    chain: ["ContextOverflow", "AgentCoreError"],
    make: (copy, extra) => new copy.ContextOverflow({ source: "guard", limit: 100, requested: 140, ...extra }),
    fields: { source: "guard", limit: 100, requested: 140 },
  },
  {
    name: "EndpointSilent",
    chain: ["EndpointSilent", "AgentCoreError"],
    make: (copy, extra) => new copy.EndpointSilent({ idleMs: 250, phase: "first-chunk", ...extra }),
    fields: { idleMs: 250, phase: "first-chunk" },
  },
  {
    name: "ToolArgumentsError",
    chain: ["ToolArgumentsError", "AgentCoreError"],
    make: (copy, extra) => new copy.ToolArgumentsError({ kind: "truncated", raw: '{"path": "a', toolName: "read", ...extra }),
    fields: { kind: "truncated", raw: '{"path": "a', toolName: "read" },
  },
  {
    name: "AgentLoopError",
    chain: ["AgentLoopError", "AgentCoreError"],
    make: (copy, extra) => new copy.AgentLoopError({ cause: extra.cause, run, ...(extra.message === undefined ? {} : { message: extra.message }) }),
    fields: { run },
  },
  {
    name: "ToolIterationLimit",
    chain: ["ToolIterationLimit", "AgentCoreError"],
    make: (copy, extra) => new copy.ToolIterationLimit({ limit: 8, run, ...extra }),
    fields: { limit: 8, run },
  },
  {
    name: "AgentLoopOverflow",
    chain: ["AgentLoopOverflow", "ContextOverflow", "AgentCoreError"],
    make: (copy, extra) =>
      new copy.AgentLoopOverflow({
        cause: new copy.ContextOverflow({ endpointMessage: "prompt is too long", cause: extra.cause }),
        run,
        ...(extra.message === undefined ? {} : { message: extra.message }),
      }),
    fields: { source: "endpoint", endpointMessage: "prompt is too long", run },
    causeOf: (error) => (error.cause as Error).cause,
  },
  {
    name: "NegotiationError",
    chain: ["NegotiationError", "AgentCoreError"],
    make: (copy, extra) => new copy.NegotiationError({ refused: "stream_options", attempts: 2, ...extra }),
    fields: { refused: "stream_options", attempts: 2 },
  },
  {
    name: "MalformedStreamEvent",
    chain: ["MalformedStreamEvent", "AgentCoreError"],
    make: (copy, extra) => new copy.MalformedStreamEvent({ line: '{"choices": [', ...extra }),
    fields: { line: '{"choices": [' },
  },
  {
    name: "StreamInterrupted",
    chain: ["StreamInterrupted", "AgentCoreError"],
    make: (copy, extra) => new copy.StreamInterrupted({ produced: true, events: 3, ...extra }),
    fields: { produced: true, events: 3 },
  },
  {
    name: "UnexpectedReply",
    chain: ["UnexpectedReply", "AgentCoreError"],
    make: (copy, extra) =>
      new copy.UnexpectedReply({ status: 200, contentType: "text/html", url: "http://127.0.0.1:1/v1/chat/completions", body: "<h1>Sign in</h1>", ...extra }),
    fields: { status: 200, contentType: "text/html", url: "http://127.0.0.1:1/v1/chat/completions", body: "Sign in" },
  },
  {
    name: "CompactionMismatch",
    chain: ["CompactionMismatch", "AgentCoreError"],
    make: (copy, extra) => new copy.CompactionMismatch({ through: 4, length: 3, ...extra }),
    fields: { through: 4, length: 3 },
  },
  {
    name: "LedgerMismatch",
    chain: ["LedgerMismatch", "AgentCoreError"],
    make: (copy, extra) => new copy.LedgerMismatch({ through: 9, length: 2, ...extra }),
    fields: { through: 9, length: 2 },
  },
];

function classOf(copy: Package, name: string): ErrorClass {
  return (copy as unknown as Record<string, ErrorClass>)[name] as ErrorClass;
}

describe("the error family", () => {
  // Two copies of the whole package, as a host with a bundled copy and a dependency's own has:
  // every module evaluated twice, the base and its marker included.
  let first: Package;
  let second: Package;
  beforeAll(async () => {
    first = await import("../../src/index.js");
    vi.resetModules();
    second = await import("../../src/index.js");
  });

  it("loads two copies whose classes are distinct", () => {
    expect(second.AgentCoreError).not.toBe(first.AgentCoreError);
    expect(second.ContextOverflow).not.toBe(first.ContextOverflow);
  });

  for (const { name, chain, make, fields, causeOf } of cases) {
    describe(name, () => {
      it("is recognised by the other copy's guard, where instanceof fails", () => {
        for (const [from, to] of [
          [first, second],
          [second, first],
        ] as const) {
          const error = make(from, {});
          expect(error instanceof classOf(from, name)).toBe(true);
          expect(error instanceof classOf(to, name)).toBe(false);
          expect(error instanceof to.AgentCoreError).toBe(false);
          expect(classOf(to, name).is(error)).toBe(true);
          expect(to.AgentCoreError.is(error)).toBe(true);
          expect(error).toBeInstanceOf(Error);
        }
      });

      it("answers no to every other class's guard but those it extends", () => {
        const error = make(first, {});
        for (const other of cases) expect(classOf(second, other.name).is(error), other.name).toBe(chain.includes(other.name));
      });

      it("carries its name, the marker with its class chain, and its fields", () => {
        const error = make(first, {});
        expect(error.name).toBe(name);
        expect((error as unknown as Record<symbol, unknown>)[MARKER]).toEqual(chain);
        expect(Object.keys(error)).not.toContain(MARKER.toString());
        for (const [field, value] of Object.entries(fields)) expect((error as unknown as Record<string, unknown>)[field], field).toBe(value);
        expect(error.message).not.toBe("");
      });

      it("chains the cause it is handed, and takes a message in place of its own wording", () => {
        const cause = new Error("socket hang up");
        const error = make(first, { cause, message: "in so many words" });
        expect((causeOf ?? ((made: Error) => made.cause))(error)).toBe(cause);
        expect(error.message).toBe("in so many words");
        if (!causeOf) expect(Object.hasOwn(make(first, {}), "cause")).toBe(false);
      });
    });
  }

  it("judges a value that carries the marker by the marker alone", () => {
    const silent = new EndpointSilent({ idleMs: 10 });
    Object.defineProperty(silent, "name", { value: "ContextOverflow" });
    expect(ContextOverflow.is(silent)).toBe(false);
    expect(EndpointSilent.is(silent)).toBe(true);
  });

  it("does not count an Error that only borrows a name as one of the family", () => {
    const borrowed = Object.assign(new Error("x"), { name: "ContextOverflow" });
    expect(AgentCoreError.is(borrowed)).toBe(false);
    expect(AgentCoreError.is(new Error("x"))).toBe(false);
    expect(AgentCoreError.is({ [MARKER]: "AgentCoreError" })).toBe(false);
  });

  it("never throws from a guard, whatever it is handed", () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("boom");
        },
        getPrototypeOf() {
          throw new Error("boom");
        },
      },
    );
    for (const { name } of cases) expect(classOf(first, name).is(hostile)).toBe(false);
    expect(AgentCoreError.is(hostile)).toBe(false);
    for (const name of ["ToolArgumentsError", "AgentLoopError"]) {
      const impostor = new Proxy(new Error("x"), {
        get: (target, key) => (key === "name" ? name : Reflect.get(target, key)),
        has() {
          throw new Error("boom");
        },
      });
      expect(classOf(first, name).is(impostor), name).toBe(false);
    }
    fc.assert(
      fc.property(fc.anything(), (value) => {
        expect(AgentCoreError.is(value)).toBe(false);
        for (const { name } of cases) expect(classOf(first, name).is(value)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it("types each name as its literal, a subclass's included", () => {
    expectTypeOf(new EndpointSilent({ idleMs: 1 }).name).toEqualTypeOf<"EndpointSilent">();
    expectTypeOf(new ContextOverflow().name).toEqualTypeOf<"ContextOverflow" | "AgentLoopOverflow">();
    expectTypeOf(new AgentLoopOverflow({ cause: new ContextOverflow(), run }).name).toEqualTypeOf<"AgentLoopOverflow">();
    expectTypeOf(new AgentLoopError({ cause: 1, run }).name).toEqualTypeOf<"AgentLoopError">();
  });
});

describe("AgentCoreError.mark and AgentCoreError.isNamed", () => {
  it("let a host's own subclass be recognised by another copy of the package", async () => {
    const copies = [await import("../../src/index.js")];
    vi.resetModules();
    copies.push(await import("../../src/index.js"));
    const [one, two] = copies as [typeof PackageModule, typeof PackageModule];
    class QuotaSpent extends one.AgentCoreError {
      override readonly name = "QuotaSpent" as const;
      static {
        one.AgentCoreError.mark(this, "QuotaSpent");
      }
      constructor() {
        super({ message: "quota spent" });
      }
    }
    const error = new QuotaSpent();
    expect(error instanceof two.AgentCoreError).toBe(false);
    expect(two.AgentCoreError.is(error)).toBe(true);
    expect(two.AgentCoreError.isNamed(error, "QuotaSpent")).toBe(true);
    expect(two.AgentCoreError.isNamed(error, "ContextOverflow")).toBe(false);
    expect(two.AgentCoreError.isNamed(Object.assign(new Error("x"), { name: "QuotaSpent" }), "QuotaSpent", "quota")).toBe(false);
  });

  it("mark the optional entries' and the command's errors into the same family", async () => {
    const { McpServerError } = await import("../../src/mcp.js");
    const { RedisBackendError } = await import("../../src/redis.js");
    const { CliFailure } = await import("../../src/cli/errors.js");
    const { ArithmeticError } = await import("../../src/cli/demo-tools.js");
    const errors = [
      new McpServerError({ server: "files", problem: "connect" }),
      new RedisBackendError({ url: "redis://127.0.0.1:1" }),
      new CliFailure("usage", "no such option"),
      new ArithmeticError("1 / 0"),
    ];
    for (const error of errors) {
      expect((error as unknown as Record<symbol, unknown>)[MARKER], error.name).toEqual([error.name, "AgentCoreError"]);
      expect(AgentCoreError.is(error), error.name).toBe(true);
    }
    expect(McpServerError.is(errors[1])).toBe(false);
    expect(RedisBackendError.is(errors[0])).toBe(false);
  });
});
