import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { errorMessage } from "../src/errors.js";

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
