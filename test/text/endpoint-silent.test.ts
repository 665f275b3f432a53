import { describe, expect, it } from "vitest";
import { ContextOverflow } from "../../src/text/context-overflow.js";
import { EndpointSilent } from "../../src/text/endpoint-silent.js";

describe("EndpointSilent", () => {
  it("carries which wait ran out and is told from other errors", () => {
    const silent = new EndpointSilent({ idleMs: 250, phase: "first-chunk" });
    expect(silent.phase).toBe("first-chunk");
    expect(silent.idleMs).toBe(250);
    expect(silent.message).toContain("first chunk");
    expect(EndpointSilent.is(silent)).toBe(true);
    expect(EndpointSilent.is(new ContextOverflow())).toBe(false);
  });

  it("is an idle wait where no phase is given", () => {
    const silent = new EndpointSilent({ idleMs: 100 });
    expect(silent.phase).toBe("idle");
    expect(silent.message).toBe("The endpoint went silent for 100 ms in the middle of a reply.");
  });
});
