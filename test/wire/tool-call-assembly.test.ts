import { describe, expect, it } from "vitest";
import { ToolCallAssembly } from "../../src/wire/tool-call-assembly.js";

function assemble(pieces: Array<Record<string, unknown>>): ReturnType<ToolCallAssembly["calls"]> {
  const assembly = new ToolCallAssembly();
  for (const piece of pieces) assembly.add(piece);
  let next = 0;
  return assembly.calls(() => `made_${++next}`);
}

describe("ToolCallAssembly", () => {
  it("appends a call's argument pieces by index and orders calls by index", () => {
    const calls = assemble([
      { index: 1, id: "b", function: { name: "second", arguments: "{}" } },
      { index: 0, id: "a", function: { name: "first", arguments: '{"x":' } },
      { index: 0, function: { arguments: "1}" } },
    ]);
    expect(calls.map((call) => [call.id, call.function.name, call.function.arguments])).toEqual([
      ["a", "first", '{"x":1}'],
      ["b", "second", "{}"],
    ]);
  });

  it("reads a repeated id as the same call and a new id at the same index as another call", () => {
    const calls = assemble([
      { index: 0, id: "one", function: { name: "f", arguments: '{"a":' } },
      { index: 0, id: "one", function: { arguments: "1}" } },
      { index: 0, id: "two", function: { name: "g", arguments: "{}" } },
    ]);
    expect(calls.map((call) => [call.id, call.function.arguments])).toEqual([
      ["one", '{"a":1}'],
      ["two", "{}"],
    ]);
  });

  it("starts another call at index 0 when a new name follows complete arguments, with ids made for both", () => {
    const calls = assemble([
      { index: 0, function: { name: "f", arguments: { a: 1 } } },
      { index: 0, function: { name: "g", arguments: "{}" } },
    ]);
    expect(calls.map((call) => [call.id, call.function.name, call.function.arguments])).toEqual([
      ["made_1", "f", '{"a":1}'],
      ["made_2", "g", "{}"],
    ]);
  });

  it("continues the last call for a piece without an index or id, and drops a harmony end-of-call token", () => {
    const calls = assemble([{ id: "c", function: { name: "f", arguments: '{"q":' } }, { function: { arguments: '"x"} <|call|>' } }]);
    expect(calls).toEqual([{ id: "c", type: "function", function: { name: "f", arguments: '{"q":"x"}' } }]);
  });

  it("keeps a field the library does not read on the call it came with", () => {
    const calls = assemble([{ index: 0, id: "k", function: { name: "f", arguments: "{}" }, extra_content: { google: { thought_signature: "sig" } } }]);
    expect(calls[0]).toMatchObject({ id: "k", extra_content: { google: { thought_signature: "sig" } } });
  });
});
