import { describe, expect, it } from "vitest";
import { ContextOverflow } from "../../src/text/context-overflow.js";

describe("ContextOverflow", () => {
  it("carries what happened and is recognised without instanceof", () => {
    const cause = new Error("raw");
    const overflow = new ContextOverflow({ limit: 8192, requested: 9000, source: "guard", cause });
    expect(overflow.name).toBe("ContextOverflow");
    expect(overflow.limit).toBe(8192);
    expect(overflow.requested).toBe(9000);
    expect(overflow.cause).toBe(cause);
    expect(overflow.message).toContain("8192");
    const foreign = Object.assign(new Error("x"), { name: "ContextOverflow" });
    expect(ContextOverflow.is(foreign)).toBe(true);
  });

  it("says the endpoint refused, with its words, where no source is given", () => {
    const overflow = new ContextOverflow({ endpointMessage: "prompt is too long" });
    expect(overflow.source).toBe("endpoint");
    expect(overflow.message).toBe("The endpoint refused the request as too long for the context window: prompt is too long");
    expect(overflow.limit).toBeUndefined();
  });
});
