import { describe, expect, it } from "vitest";
import fc from "fast-check";
import "../support/fast-check-seed.js";
import type { Message } from "../../src/shapes/config.js";
import {
  decideProviderFieldRefusal,
  mergeProviderField,
  providerFieldProblem,
  readMessageFieldRefusal,
  shapeProviderFields,
} from "../../src/wire/provider-fields.js";
import { PROFILES, messageOf, refusalWording } from "../support/endpoint.js";

const origin = { baseUrl: "http://127.0.0.1:1/v1", model: "g", fields: ["reasoning_details"] };
const message: Message = {
  role: "assistant",
  content: "",
  reasoning_details: [{ type: "reasoning.encrypted", data: "x" }],
  fieldsOrigin: origin,
  tool_calls: [{ id: "c", type: "function", function: { name: "read", arguments: "{}" }, extra_content: { google: { thought_signature: "s" } } }],
};

describe("mergeProviderField", () => {
  it("joins the pieces of an array item streamed under one index, and appends other items", () => {
    const merged = [
      [{ type: "reasoning.text", text: "a", index: 0 }],
      [{ type: "reasoning.text", text: "b", index: 0 }],
      [{ type: "reasoning.encrypted", data: "zz", index: 1 }],
    ].reduce<unknown>((before, piece) => mergeProviderField(before, piece), undefined);
    expect(merged).toEqual([
      { type: "reasoning.text", text: "ab", index: 0 },
      { type: "reasoning.encrypted", data: "zz", index: 1 },
    ]);
  });

  it("never throws and keeps a value that came whole", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(() => mergeProviderField(a, b)).not.toThrow();
        expect(mergeProviderField(undefined, b)).toEqual(b);
      }),
    );
  });
});

describe("shapeProviderFields", () => {
  it("sends the fields back to the endpoint and model they came from, never the stamp", () => {
    const [sent] = shapeProviderFields([message], { baseUrl: "http://127.0.0.1:1/v1/", model: "g", dropped: [] });
    expect(sent).not.toHaveProperty("fieldsOrigin");
    expect(sent).toMatchObject({ reasoning_details: [{ type: "reasoning.encrypted", data: "x" }] });
    expect((sent as { tool_calls: Array<Record<string, unknown>> }).tool_calls[0]!.extra_content).toEqual({ google: { thought_signature: "s" } });
  });

  it("leaves them out of a request to another model or endpoint", () => {
    for (const target of [
      { baseUrl: "http://127.0.0.1:1/v1", model: "other" },
      { baseUrl: "http://127.0.0.1:2/v1", model: "g" },
    ]) {
      const [sent] = shapeProviderFields([message], { ...target, dropped: [] });
      expect(sent).toEqual({ role: "assistant", content: "", tool_calls: [{ id: "c", type: "function", function: { name: "read", arguments: "{}" } }] });
    }
  });

  it("leaves out a refused field, and one that cannot be written as JSON, with a notice", () => {
    const notices: string[] = [];
    const odd: Message = { ...message, reasoning_details: 1n };
    const [sent] = shapeProviderFields([odd], { model: "g", dropped: ["extra_content"], onNotice: (text) => notices.push(text) });
    expect(sent).toEqual({ role: "assistant", content: "", tool_calls: [{ id: "c", type: "function", function: { name: "read", arguments: "{}" } }] });
    expect(notices).toHaveLength(1);
    expect(providerFieldProblem("x".repeat(70_000))).toMatch(/over the 65536/);
  });
});

describe("decideProviderFieldRefusal", () => {
  it("reads the recorded wording and latches the field off, and stops on a field the request did not carry", () => {
    const words = messageOf(refusalWording(PROFILES.openai, "messageField").body({ model: "g", field: "extra_content" }));
    expect(readMessageFieldRefusal(words)).toBe("extra_content");
    const model: { droppedMessageFields?: string[] } = {};
    const decision = decideProviderFieldRefusal(words, model, "g", { messages: [message] });
    expect(decision?.kind).toBe("answer");
    if (decision?.kind === "answer") decision.answers[0]!.apply();
    expect(model.droppedMessageFields).toEqual(["extra_content"]);
    expect(decideProviderFieldRefusal(words, {}, "g", { messages: [{ role: "user", content: "q" }] })?.kind).toBe("stuck");
    expect(decideProviderFieldRefusal("messages.1.reasoning_content: Extra inputs are not permitted", {}, "g", undefined)).toBeUndefined();
  });
});
