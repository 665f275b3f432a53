import fc from "fast-check";
import { describe, expect, it } from "vitest";
import "../support/fast-check-seed.js";
import { GEMMA_CALL, readGemmaCalls } from "../../src/text/gemma-call-markup.js";
import { SCRATCHPAD_CLOSES } from "../../src/text/tool-call-markup.js";
import { ALL_FENCES, DEFAULT_FENCES, stripThinking } from "../../src/text/thinking.js";
import { recoverToolCalls } from "../../src/text/tool-calls.js";

/** Writes arguments the way Gemma 4's chat template does (format_argument, keys bare). */
function writeGemma(value: unknown): string {
  if (typeof value === "string") return `<|"|>${value}<|"|>`;
  if (Array.isArray(value)) return `[${value.map(writeGemma).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value)
      .map(([key, item]) => `${key}:${writeGemma(item)}`)
      .join(",")}}`;
  }
  return String(value);
}

describe("readGemmaCalls", () => {
  it("reads a call with a string argument, as vLLM's Gemma 4 parser tests write it", () => {
    // vllm-project/vllm tests/tool_parsers/test_gemma4_tool_parser.py, test_single_call_string_arg
    const text = '<|tool_call>call:get_weather{location:<|"|>Paris, FR<|"|>}<tool_call|>';
    expect(readGemmaCalls(text, 0)).toEqual({ start: 0, end: text.length, calls: [{ name: "get_weather", args: { location: "Paris, FR" } }] });
  });

  it("reads numbers, booleans, nested objects and lists", () => {
    const text = '<|tool_call>call:plan{days:3,ok:true,opts:{units:<|"|>c<|"|>,list:[1,<|"|>two<|"|>,false]}}<tool_call|>';
    expect(readGemmaCalls(text, 0).calls[0]?.args).toEqual({ days: 3, ok: true, opts: { units: "c", list: [1, "two", false] } });
  });

  it("keeps a string's contents as written, commas, braces and quotes included", () => {
    const text = '<|tool_call>call:write{path:<|"|>a.txt<|"|>,text:<|"|>x, {y}: "z"]<|"|>}<tool_call|>';
    expect(readGemmaCalls(text, 0).calls[0]?.args).toEqual({ path: "a.txt", text: 'x, {y}: "z"]' });
  });

  it("reads nothing from markup that almost matches", () => {
    for (const text of [
      "<|tool_call>get_weather{}<tool_call|>",
      "<|tool_call>call:{}<tool_call|>",
      '<|tool_call>call:get{location:<|"|>Paris}<tool_call|>',
      "<|tool_call>call:get{location}<tool_call|>",
      "<|tool_call>call:get{a:1,,}<tool_call|>",
      "<|tool_call>call:get[1]<tool_call|>",
    ]) {
      expect(readGemmaCalls(text, 0).calls, text).toEqual([]);
    }
  });

  it("reads back whatever arguments the template writes, and never throws on near misses", () => {
    const key = fc.stringMatching(/^[a-z_][a-z0-9_]{0,6}$/);
    const text = fc.string({ maxLength: 8 }).filter((value) => !value.includes('<|"|>'));
    const leaf = fc.oneof(text, fc.boolean(), fc.integer());
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: "small" }, leaf, fc.array(tie("node"), { maxLength: 3 }), fc.dictionary(key, tie("node"), { maxKeys: 3 })),
    })).node;
    fc.assert(
      fc.property(fc.dictionary(key, value, { maxKeys: 4 }), (args) => {
        const markup = `${GEMMA_CALL}call:tool{${writeGemma(args).slice(1, -1)}}<tool_call|>`;
        const read = readGemmaCalls(markup, 0);
        expect(JSON.stringify(read.calls[0]?.args)).toBe(JSON.stringify(args));
        expect(read.end).toBe(markup.length);
      }),
    );
    const piece = fc.oneof(fc.constantFrom(GEMMA_CALL, "call:", "{", "}", "[", "]", ",", ":", '<|"|>', "<tool_call|>", "<|", "a"), fc.string({ maxLength: 4 }));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 20 }), (pieces) => {
        const body = GEMMA_CALL + pieces.join("");
        expect(() => readGemmaCalls(body, 0)).not.toThrow();
        expect(() => recoverToolCalls(body, ["a"])).not.toThrow();
      }),
    );
  });
});

describe("Gemma 4 served raw", () => {
  it("has its call recovered and taken out of the answer, the thought channel read as reasoning", () => {
    // The thought channel, then the call, in the markup of the chat template (llama.cpp
    // models/templates/google-gemma-4-31B-it-interleaved.jinja).
    const raw = '<|channel>thought\nI should inspect files.\n<channel|><|tool_call>call:read_file{path:<|"|>Cargo.toml<|"|>}<tool_call|>';
    const split = stripThinking(raw);
    expect(split).toEqual({ content: '<|tool_call>call:read_file{path:<|"|>Cargo.toml<|"|>}<tool_call|>', reasoning: "I should inspect files." });
    const found = recoverToolCalls(split.content, ["read_file"]);
    expect(found.calls.map((call) => call.function)).toEqual([{ name: "read_file", arguments: '{"path":"Cargo.toml"}' }]);
    expect(found.text).toBe("");
  });

  it("recovers two calls in a row and keeps the prose around them", () => {
    const found = recoverToolCalls("Checking.<|tool_call>call:a{x:1}<tool_call|><|tool_call>call:b{}<tool_call|>Done.", ["a", "b"]);
    expect(found.calls.map((call) => call.function)).toEqual([
      { name: "a", arguments: '{"x":1}' },
      { name: "b", arguments: "{}" },
    ]);
    expect(found.text).toBe("Checking.Done.");
  });

  it("recovers a call written without its opening token straight after the thought channel", () => {
    // The shape quoted in vllm-project/vllm#54256 (its path shortened).
    const raw = '<|channel>thought\nLet me inspect the code at the crash point.\n<channel|>call:bash{command:<|"|>cat src/entry.c<|"|>}';
    const split = stripThinking(raw);
    expect(split.reasoning).toBe("Let me inspect the code at the crash point.");
    const found = recoverToolCalls(split.content, ["bash"]);
    expect(found.calls.map((call) => call.function)).toEqual([{ name: "bash", arguments: '{"command":"cat src/entry.c"}' }]);
    expect(found.text).toBe("");
    // Only a reply that is nothing but the call, to an offered tool, reads as one.
    expect(recoverToolCalls(split.content, ["read"]).calls).toEqual([]);
    expect(recoverToolCalls('call:bash{command:<|"|>ls<|"|>} and more', ["bash"]).calls).toEqual([]);
  });

  it("leaves markup it cannot read in the text", () => {
    const text = "Use <|tool_call>call:a{x:<tool_call|> like this.";
    expect(recoverToolCalls(text, ["a"])).toEqual({ calls: [], text });
  });
});

describe("the scratchpad closes recoverToolCalls cuts at", () => {
  it("are the closes of the fence table, so a fence added there is cut at too", () => {
    const channelFences = ALL_FENCES.filter((fence) => fence.markers !== undefined);
    expect(new Set(SCRATCHPAD_CLOSES)).toEqual(new Set(ALL_FENCES.filter((fence) => !channelFences.includes(fence)).map((fence) => fence.close)));
    // Only harmony's channel fence is left out: its calls stand between its analysis passages.
    expect(channelFences.map((fence) => fence.open)).toEqual(["<|channel|>analysis<|message|>"]);
    for (const fence of DEFAULT_FENCES) if (fence.markers === undefined) expect(SCRATCHPAD_CLOSES).toContain(fence.close);
    expect(SCRATCHPAD_CLOSES).toContain("<channel|>");
  });
});
