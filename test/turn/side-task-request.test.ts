import { describe, expect, it } from "vitest";
import { readCompletion } from "../../src/turn/side-task-request.js";
import { StreamErrorEvent } from "../../src/wire/stream.js";
import { FAULT_POINTS, fault, type FaultShape, type JsonScript } from "../support/endpoint.js";

describe("readCompletion", () => {
  const inBand: FaultShape[] = ["errorBesideChoice", "errorEmptyChoices", "errorNoChoices", "rateLimitInStream"];
  for (const shape of inBand) {
    it(`rejects a 200 body carrying ${shape} at every point, never reading its text as the answer`, () => {
      for (const point of FAULT_POINTS) {
        const body = (fault(shape, point, { streamed: false }) as JsonScript).body;
        let caught: unknown;
        try {
          readCompletion(body);
        } catch (error) {
          caught = error;
        }
        expect(StreamErrorEvent.is(caught), `${shape} ${point}`).toBe(true);
      }
    });
  }

  it("rejects a bare finish_reason of error with words saying so, and reads a whole completion", () => {
    expect(() => readCompletion({ choices: [{ index: 0, message: { role: "assistant", content: "half" }, finish_reason: "error" }] })).toThrow(
      'The server ended the reply with finish_reason "error".',
    );
    expect(readCompletion({ choices: [{ index: 0, message: { role: "assistant", content: "whole" }, finish_reason: "stop" }] })).toEqual({
      text: "whole",
      finishReason: "stop",
    });
  });
});
