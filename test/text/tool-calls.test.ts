import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ToolDefinition } from "../../src/shapes/config.js";
import { MAX_JSON_DEPTH } from "../../src/text/json-repair.js";
import { parseToolArguments, recoverToolCalls, ToolArgumentsError } from "../../src/text/tool-calls.js";
import { stripThinking } from "../../src/text/thinking.js";
import { ARGUMENT_SHAPES, MARKUP_SHAPES } from "../support/adversarial.js";

function fixture<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(`../fixtures/model-outputs/${name}`, import.meta.url), "utf8")) as T;
}

/** Text → the object parseToolArguments should read from it. */
const repairs: Array<[string, string, Record<string, unknown>]> = [
  ["plain JSON", '{"a": 1}', { a: 1 }],
  ["empty text", "", {}],
  ["blank text", "  \n\t ", {}],
  ["JSON null", "null", {}],
  ["an empty object", "{}", {}],
  ["single-quoted keys and values", "{'path': 'a.txt'}", { path: "a.txt" }],
  ["Python True, False and None", "{'a': True, 'b': False, 'c': None}", { a: true, b: false, c: null }],
  ["upper-case TRUE and NULL", '{"a": TRUE, "b": NULL}', { a: true, b: null }],
  ["bare keys", "{path: 'x', limit: 10}", { path: "x", limit: 10 }],
  ["a bare key spelled like a Python constant", "{True: 1, None: 2}", { True: 1, None: 2 }],
  ["a numeric key", "{1: 'one'}", { "1": "one" }],
  ["a trailing comma in an object", '{"a": 1,}', { a: 1 }],
  ["a trailing comma in an array", '{"a": [1, 2,]}', { a: [1, 2] }],
  ["a trailing comma before a newline", '{\n  "a": 1,\n}', { a: 1 }],
  ["a doubled comma", '{"a": 1,, "b": 2}', { a: 1, b: 2 }],
  ["a line comment", '{"a": 1 // the count\n}', { a: 1 }],
  ["a block comment", '{/* note */ "a": 1}', { a: 1 }],
  ["a raw newline inside a string", '{"code": "line1\nline2"}', { code: "line1\nline2" }],
  ["a raw tab inside a string", '{"code": "a\tb"}', { code: "a\tb" }],
  ["a lone backslash kept as a backslash", '{"path": "C:\\Users\\me"}', { path: "C:\\Users\\me" }],
  ["an escaped single quote in a double-quoted string", '{"q": "it\\\'s"}', { q: "it's" }],
  ["an apostrophe inside a single-quoted string", "{'q': 'what's up'}", { q: "what's up" }],
  ["double quotes inside a single-quoted string", "{'q': 'say \"hi\"'}", { q: 'say "hi"' }],
  ["unescaped quotes inside a string", '{"q": "say "hi" now"}', { q: 'say "hi" now' }],
  ["a Python \\x escape", "{'c': '\\x41'}", { c: "A" }],
  ["the word True inside a string left alone", "{'a': 'True or None, surely'}", { a: "True or None, surely" }],
  ["a comma and brace inside a string left alone", "{'a': 'x,}y', 'b': 1,}", { a: "x,}y", b: 1 }],
  ["a JSON string holding the object", '"{\\"a\\": 1}"', { a: 1 }],
  ["two layers of JSON strings", JSON.stringify(JSON.stringify(JSON.stringify({ a: 1 }))), { a: 1 }],
  ["a JSON string holding almost-JSON", JSON.stringify("{'a': True}"), { a: true }],
  ["a ``` fence around the arguments", '```json\n{"a": 1}\n```', { a: 1 }],
  ["a fence with no language", "```\n{'a': 1}\n```", { a: 1 }],
  ["a leading plus and bare decimal points", "{'a': +1, 'b': .5, 'c': 2.}", { a: 1, b: 0.5, c: 2 }],
  ["nested almost-JSON", "{'a': {'b': [True, None, 'x',],},}", { a: { b: [true, null, "x"] } }],
  ["unicode text", '{"city": "北京", "emoji": "🙂"}', { city: "北京", emoji: "🙂" }],
  ["surrounding whitespace", '\n  {"a": 1}  \n', { a: 1 }],
];

/** Text → the error kind parseToolArguments should throw. */
const failures: Array<[string, string, "truncated" | "malformed"]> = [
  ["an object cut off after a key", '{"a": ', "truncated"],
  ["a string cut off", '{"a": "hel', "truncated"],
  ["an array cut off", '{"a": [1, 2', "truncated"],
  ["a text ending in a backslash", '{"a": "x\\', "truncated"],
  ["a top-level array", "[1, 2]", "malformed"],
  ["a top-level number", "42", "malformed"],
  ["a top-level boolean", "true", "malformed"],
  ["a plain string", '"hello"', "malformed"],
  ["prose", "hello there", "malformed"],
  ["an extra closing brace", '{"a": 1}}', "malformed"],
  ["two objects", '{"a": 1}{"b": 2}', "malformed"],
  ["a bare word as a value", '{"a": yes}', "malformed"],
];

describe("parseToolArguments", () => {
  it.each(repairs)("reads %s", (_name, text, expected) => {
    expect(parseToolArguments(text)).toEqual(expected);
  });

  it("covers at least thirty repair cases", () => {
    expect(repairs.length).toBeGreaterThanOrEqual(30);
  });

  it.each(failures)("refuses %s", (_name, text, kind) => {
    let thrown: unknown;
    try {
      parseToolArguments(text);
    } catch (error) {
      thrown = error;
    }
    expect(ToolArgumentsError.is(thrown)).toBe(true);
    expect((thrown as ToolArgumentsError).kind).toBe(kind);
    expect((thrown as ToolArgumentsError).raw).toBe(text);
  });

  it("calls unreadable arguments truncated when the turn stopped at the ceiling", () => {
    const error = catchError(() => parseToolArguments('{"a": 1} trailing', { truncated: true, toolName: "write" }));
    expect(error.kind).toBe("truncated");
    expect(error.toolName).toBe("write");
    expect(error.message).toContain("cut off");
    expect(error.message).toContain("length limit");
    expect(error.message).toContain("write");
  });

  it("throws a ToolArgumentsError whose kind is truncated when the turn stopped at the ceiling, and malformed otherwise", () => {
    for (const text of ['{"a": ', '{"a": "hel', '{"a": [1, 2', '{"a": 1} trailing']) {
      expect(catchError(() => parseToolArguments(text, { truncated: true })).kind).toBe("truncated");
      const otherwise = catchError(() => parseToolArguments(text, { truncated: false, toolName: "write" }));
      expect(otherwise.kind).toBe("malformed");
      expect(otherwise.message).not.toContain("cut off");
    }
  });

  it("returns complete arguments even when the turn stopped at the ceiling", () => {
    expect(parseToolArguments('{"a": 1}', { truncated: true })).toEqual({ a: 1 });
  });

  it("tells the model how to fix malformed arguments", () => {
    const error = catchError(() => parseToolArguments("[1]", { toolName: "read" }));
    expect(error.name).toBe("ToolArgumentsError");
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toContain("not a JSON object");
    expect(error.message).toContain("read");
  });

  it("recognises an error from another copy of the package by its name", () => {
    const foreign = Object.assign(new Error("x"), { name: "ToolArgumentsError", kind: "malformed" });
    expect(ToolArgumentsError.is(foreign)).toBe(true);
    expect(ToolArgumentsError.is(new Error("x"))).toBe(false);
    expect(ToolArgumentsError.is("ToolArgumentsError")).toBe(false);
  });

  it("accepts arguments a server already parsed, and none at all", () => {
    expect(parseToolArguments({ a: 1 } as unknown as string)).toEqual({ a: 1 });
    expect(parseToolArguments(undefined as unknown as string)).toEqual({});
    expect(() => parseToolArguments(5 as unknown as string)).toThrow(ToolArgumentsError);
  });

  describe("on real model outputs", () => {
    const { cases } = fixture<{ cases: Array<{ source: string; what: string; text: string; value?: unknown; kind?: string }> }>("tool-arguments.json");
    it.each(cases.map((entry) => [entry.what, entry] as const))("reads %s", (_what, entry) => {
      expect(entry.source).toMatch(/^https:\/\/github\.com\//);
      if (entry.kind) expect(catchError(() => parseToolArguments(entry.text)).kind).toBe(entry.kind);
      else expect(parseToolArguments(entry.text)).toEqual(entry.value);
    });
  });
});

function catchError(run: () => unknown): ToolArgumentsError {
  try {
    run();
  } catch (error) {
    if (ToolArgumentsError.is(error)) return error;
    throw error;
  }
  throw new Error("expected a ToolArgumentsError");
}

interface RecoveryCase {
  source: string;
  what: string;
  text: string;
  toolNames: string[];
  tools?: ToolDefinition[];
  /** Each call's arguments as an object, or `rawArguments` where they are kept as written. */
  calls: Array<{ name: string; arguments?: Record<string, unknown>; rawArguments?: string }>;
  rest: string;
}

describe("recoverToolCalls", () => {
  describe("on real model outputs", () => {
    const { cases } = fixture<{ cases: RecoveryCase[] }>("recovered-calls.json");
    it.each(cases.map((entry) => [`${entry.what} (${entry.source})`, entry] as const))("recovers %s", (_what, entry) => {
      const found = recoverToolCalls(entry.text, entry.toolNames, entry.tools ? { tools: entry.tools } : {});
      expect(
        found.calls.map((call, index) =>
          entry.calls[index]?.rawArguments !== undefined
            ? { name: call.function.name, rawArguments: call.function.arguments }
            : { name: call.function.name, arguments: JSON.parse(call.function.arguments) },
        ),
      ).toEqual(entry.calls);
      found.calls.forEach((call, index) => {
        expect(call.id).toBe(`call_recovered_${index}`);
        expect(call.type).toBe("function");
      });
      expect(found.text).toBe(entry.rest);
    });

    it("holds a fixture for every family the recovery reads", () => {
      const texts = cases.map((entry) => entry.text).join("\n");
      for (const marker of ["<tool_call>", "<function=", "[TOOL_CALLS][", "[TOOL_CALLS] [", "[ARGS]", "<|python_tag|>", "commentary to="]) {
        expect(texts).toContain(marker);
      }
    });
  });

  it("looks only after the last </think>", () => {
    const text = '<think>I could write <tool_call>{"name": "a", "arguments": {}}</tool_call></think>Done.';
    expect(recoverToolCalls(text, ["a"])).toEqual({ calls: [], text });
  });

  it("finds a call after the scratchpad and keeps the scratchpad in the text", () => {
    const text = '<think>plan</think>\n<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call>';
    const found = recoverToolCalls(text, ["a"]);
    expect(found.calls).toHaveLength(1);
    expect(found.text).toBe("<think>plan</think>");
  });

  it("recovers a tagged call naming an unknown tool, for the loop to answer", () => {
    const found = recoverToolCalls('<tool_call>{"name": "nope", "arguments": {}}</tool_call>', ["a"]);
    expect(found.calls[0]?.function.name).toBe("nope");
  });

  it("reads several <tool_call> blocks in order", () => {
    const text = 'A\n<tool_call>\n{"name": "a", "arguments": {"n": 1}}\n</tool_call>\n<tool_call>\n{"name": "b", "arguments": {}}\n</tool_call>\nB';
    const found = recoverToolCalls(text, ["a", "b"]);
    expect(found.calls.map((call) => [call.id, call.function.name, call.function.arguments])).toEqual([
      ["call_recovered_0", "a", '{"n":1}'],
      ["call_recovered_1", "b", "{}"],
    ]);
    expect(found.text).toBe("A\n\nB");
  });

  it("repairs almost-JSON inside a <tool_call> block", () => {
    const found = recoverToolCalls("<tool_call>{'name': 'a', 'arguments': {'x': True,}}</tool_call>", ["a"]);
    expect(found.calls[0]?.function.arguments).toBe('{"x":true}');
  });

  it("reads a <tool_call> cut off before its closing tag", () => {
    const found = recoverToolCalls('<tool_call>\n{"name": "a", "arguments": {"x": 1}}', ["a"]);
    expect(found.calls[0]?.function.arguments).toBe('{"x":1}');
  });

  it("leaves a <tool_call> it cannot read in the text", () => {
    const text = "<tool_call>not a call</tool_call>";
    expect(recoverToolCalls(text, ["a"])).toEqual({ calls: [], text });
  });

  it("keeps Qwen3-Coder values as strings when no type is declared", () => {
    const found = recoverToolCalls("<tool_call>\n<function=a>\n<parameter=n>\n10\n</parameter>\n</function>\n</tool_call>", ["a"]);
    expect(JSON.parse(found.calls[0]?.function.arguments ?? "")).toEqual({ n: "10" });
  });

  it("reads several functions in one Qwen3-Coder block", () => {
    const text = "<tool_call>\n<function=a>\n<parameter=x>1</parameter>\n</function>\n<function=b>\n</function>\n</tool_call>";
    expect(recoverToolCalls(text, ["a", "b"]).calls.map((call) => call.function.name)).toEqual(["a", "b"]);
  });

  it("leaves an unwrapped <function=…> naming an unknown tool alone", () => {
    const text = "<function=rm>\n<parameter=path>/</parameter>\n</function>";
    expect(recoverToolCalls(text, ["ls"]).calls).toHaveLength(0);
  });

  it("reads Mistral's [CALL_ID] spelling and the form without [ARGS]", () => {
    const found = recoverToolCalls('[TOOL_CALLS]a[CALL_ID]abc123def[ARGS]{"x": 1}[TOOL_CALLS]b{"y": 2}', []);
    expect(found.calls.map((call) => [call.function.name, call.function.arguments])).toEqual([
      ["a", '{"x":1}'],
      ["b", '{"y":2}'],
    ]);
  });

  it("reads a harmony call with json glued to the tool's name", () => {
    const text = '<|channel|>commentary to=functions.shelljson<|message|>{"cmd": "ls"}<|call|>';
    const found = recoverToolCalls(text, ["shell"]);
    expect(found.calls[0]?.function).toEqual({ name: "shell", arguments: '{"cmd":"ls"}' });
    expect(found.text).toBe("");
  });

  it("reads a harmony call with a spaced json constraint and keeps the answer around it", () => {
    const text = 'Reading.<|start|>assistant<|channel|>commentary to=functions.read <|constrain|>json<|message|>{"path": "a"}<|call|>';
    const found = recoverToolCalls(text, ["read"]);
    expect(found.calls[0]?.function).toEqual({ name: "read", arguments: '{"path":"a"}' });
    expect(found.text).toBe("Reading.");
  });

  it("reads a harmony call whose recipient is in the role section, after the analysis and at the reply's start", () => {
    // openai/openai-cookbook articles/openai-harmony.md: "The recipient might be defined in the role or channel section of the header."
    const after = 'Checking.<|end|><|start|>assistant to=functions.read<|channel|>commentary json<|message|>{"path": "a"}<|call|>';
    const found = recoverToolCalls(after, ["read"]);
    expect(found.calls[0]?.function).toEqual({ name: "read", arguments: '{"path":"a"}' });
    expect(found.text).toBe("Checking.<|end|>");
    const opening = ' to=functions.read<|channel|>commentary <|constrain|>json<|message|>{"path": "b"}<|call|>';
    expect(recoverToolCalls(opening, ["read"]).calls[0]?.function).toEqual({ name: "read", arguments: '{"path":"b"}' });
    // As a raw harmony reply reaches recovery: the analysis taken out as reasoning first.
    const raw = '<|channel|>analysis<|message|>Need a.<|end|><|start|>assistant to=functions.read<|channel|>commentary json<|message|>{"path": "a"}<|call|>';
    const { content, reasoning } = stripThinking(raw);
    expect(reasoning).toBe("Need a.");
    expect(recoverToolCalls(content, ["read"])).toMatchObject({ calls: [{ function: { name: "read", arguments: '{"path":"a"}' } }], text: "" });
  });

  it("leaves to=functions. alone in prose, or where no channel follows it", () => {
    const prose = 'Harmony routes a call with to=functions.read<|channel|>commentary json<|message|>{"path": "a"} in its header.';
    expect(recoverToolCalls(prose, ["read"]).calls).toHaveLength(0);
    expect(recoverToolCalls('<|start|>assistant to=functions.read<|message|>{"path": "a"}', ["read"]).calls).toHaveLength(0);
  });

  it("recovers exactly one fenced JSON call and keeps the prose", () => {
    const text = 'I will read it.\n```json\n{"name": "read", "arguments": {"path": "a"}}\n```\nThen summarise.';
    const found = recoverToolCalls(text, ["read"]);
    expect(found.calls[0]?.function.arguments).toBe('{"path":"a"}');
    expect(found.text).toBe("I will read it.\n\nThen summarise.");
  });

  it("recovers nothing from two fenced calls, since the reply is showing examples", () => {
    const call = '```json\n{"name": "read", "arguments": {"path": "a"}}\n```';
    expect(recoverToolCalls(`${call}\nor\n${call}`, ["read"]).calls).toHaveLength(0);
  });

  it("recovers a bare or fenced JSON call only when it names a tool the request offered", () => {
    expect(recoverToolCalls('{"name": "rm", "arguments": {"path": "/"}}', ["read"]).calls).toHaveLength(0);
    expect(recoverToolCalls('Like this:\n```json\n{"name": "rm", "arguments": {"path": "/"}}\n```', ["read"]).calls).toHaveLength(0);
    expect(recoverToolCalls('{"name": "read", "arguments": {"path": "a"}}', ["read"]).calls).toHaveLength(1);
  });

  it("requires arguments on a bare JSON call", () => {
    expect(recoverToolCalls('{"name": "read"}', ["read"]).calls).toHaveLength(0);
  });

  it("reads a bare OpenAI-shaped call", () => {
    const found = recoverToolCalls('{"type": "function", "function": {"name": "read", "arguments": "{\\"path\\": \\"a\\"}"}}', ["read"]);
    expect(found.calls[0]?.function).toEqual({ name: "read", arguments: '{"path":"a"}' });
  });

  it("keeps arguments it cannot repair as written, for dispatch to report", () => {
    const found = recoverToolCalls('<tool_call>{"name": "a", "arguments": "{\\"x\\": "}</tool_call>', ["a"]);
    expect(found.calls[0]?.function.arguments).toBe('{"x": ');
  });

  it("returns the text unchanged when it finds nothing", () => {
    expect(recoverToolCalls("  just prose \n", ["a"])).toEqual({ calls: [], text: "  just prose \n" });
    expect(recoverToolCalls("", ["a"])).toEqual({ calls: [], text: "" });
  });
});

/** A JSON value generator whose strings hold what repair could trip on. */
const trickyString = fc.oneof(
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 12 }) },
  {
    weight: 3,
    arbitrary: fc
      .array(
        fc.constantFrom(
          "True",
          "None",
          "False",
          "null",
          ",",
          ", ",
          "'",
          '"',
          "\\",
          "\\'",
          '\\"',
          "//",
          "/*",
          "*/",
          "{",
          "}",
          "[",
          "]",
          ":",
          "\n",
          "\t",
          "\r",
          "\u0000",
          "\\x41",
          "\\u00e9",
          " ",
          "a",
          "é",
          "🙂",
          "'s",
          '",',
        ),
        { maxLength: 10 },
      )
      .map((parts) => parts.join("")),
  },
);
const key = fc.oneof(trickyString, fc.constantFrom("path", "True", "None", "_x", "$y", "a1"));
const value = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    trickyString,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(key, tie("value"), { maxKeys: 4 }),
  ),
})).value;
const argumentsObject = fc.dictionary(key, value, { maxKeys: 6 });

interface Style {
  quote: "'" | '"';
  python: boolean;
  bareKeys: boolean;
  trailingCommas: boolean;
  rawControls: boolean;
  hexEscapes: boolean;
  spaced: boolean;
}

/** Writes `value` the way a model writes almost-JSON, in `style`. */
function writeAlmostJson(value: unknown, style: Style): string {
  const gap = style.spaced ? " " : "";
  if (value === null) return style.python ? "None" : "null";
  if (typeof value === "boolean") return style.python ? (value ? "True" : "False") : String(value);
  if (typeof value === "number") return JSON.stringify(value);
  if (typeof value === "string") return writeString(value, style);
  const trailing = style.trailingCommas ? "," : "";
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[${value.map((item) => writeAlmostJson(item, style)).join(`,${gap}`)}${trailing}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return "{}";
  const written = entries.map(([name, item]) => {
    const bare = style.bareKeys && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name);
    return `${bare ? name : writeString(name, style)}:${gap}${writeAlmostJson(item, style)}`;
  });
  return `{${gap}${written.join(`,${gap}`)}${trailing}${gap}}`;
}

function writeString(text: string, style: Style): string {
  let out = style.quote;
  for (const character of text) {
    const code = character.codePointAt(0) as number;
    if (character === "\\") out += "\\\\";
    else if (character === style.quote) out += `\\${character}`;
    else if (character === '"') out += '"';
    else if (code < 0x20) {
      if (style.rawControls) out += character;
      else if (style.hexEscapes) out += `\\x${code.toString(16).padStart(2, "0")}`;
      else out += JSON.stringify(character).slice(1, -1);
    } else if (code >= 0xd800 && code <= 0xdfff) out += `\\u${code.toString(16)}`;
    else out += character;
  }
  return out + style.quote;
}

const style = fc.record<Style>({
  quote: fc.constantFrom("'", '"'),
  python: fc.boolean(),
  bareKeys: fc.boolean(),
  trailingCommas: fc.boolean(),
  rawControls: fc.boolean(),
  hexEscapes: fc.boolean(),
  spaced: fc.boolean(),
});

describe("repair properties", () => {
  it("keeps every string's contents byte for byte whatever almost-JSON style wrote them", () => {
    fc.assert(
      fc.property(argumentsObject, style, (object, written) => {
        const text = writeAlmostJson(object, written);
        expect(JSON.stringify(parseToolArguments(text))).toBe(JSON.stringify(object));
      }),
      { numRuns: 2000 },
    );
  });

  it("reads valid JSON exactly as JSON.parse does", () => {
    fc.assert(
      fc.property(argumentsObject, (object) => {
        const text = JSON.stringify(object);
        expect(JSON.stringify(parseToolArguments(text))).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it("never throws anything but ToolArgumentsError on arbitrary text", () => {
    const jsonish = fc
      .array(
        fc.oneof(fc.string({ unit: "binary", maxLength: 6 }), fc.constantFrom("{", "}", "[", "]", '"', "'", ":", ",", "\\", "True", "//", "/*", "```", "\n")),
        {
          maxLength: 20,
        },
      )
      .map((parts) => parts.join(""));
    fc.assert(
      fc.property(fc.oneof(jsonish, fc.string({ unit: "binary" })), fc.boolean(), (text, truncated) => {
        try {
          const result = parseToolArguments(text, { truncated });
          expect(typeof result === "object" && result !== null && !Array.isArray(result)).toBe(true);
        } catch (error) {
          expect(ToolArgumentsError.is(error)).toBe(true);
          expect((error as ToolArgumentsError).raw).toBe(text);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("never throws from recoverToolCalls and always stores arguments as text", () => {
    const markup = fc
      .array(
        fc.oneof(
          fc.string({ unit: "binary", maxLength: 6 }),
          fc.constantFrom(
            "<tool_call>",
            "</tool_call>",
            "[TOOL_CALLS]",
            "[ARGS]",
            "[CALL_ID]",
            "<|python_tag|>",
            "<|eom_id|>",
            "<|channel|>commentary to=functions.a",
            "<|constrain|>json<|message|>",
            "<|call|>",
            "<function=a>",
            "<function=",
            "<parameter=x>",
            "</parameter>",
            "</function>",
            "</think>",
            '{"name": "a", "arguments": {',
            '{"name": "a", "parameters": ',
            "```json\n",
            "```",
            "{",
            "}",
            "[",
            "]",
            '"',
            "'",
          ),
        ),
        { maxLength: 16 },
      )
      .map((parts) => parts.join(""));
    fc.assert(
      fc.property(markup, (text) => {
        const found = recoverToolCalls(text, ["a", "b"]);
        found.calls.forEach((call, index) => {
          expect(call.id).toBe(`call_recovered_${index}`);
          expect(typeof call.function.arguments).toBe("string");
          expect(typeof call.function.name).toBe("string");
        });
        if (found.calls.length === 0) expect(found.text).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("adversarial shapes, as the bench times them", () => {
  const size = fc.integer({ min: 1, max: 6_000 });

  /** Per argument shape, what parseToolArguments documents for it: the object, or the error kind. */
  const argumentResults: Record<string, (text: string) => Record<string, unknown> | "truncated" | "malformed"> = {
    "open objects": (text) => ((text.match(/\{/g) ?? []).length > MAX_JSON_DEPTH ? "malformed" : "truncated"),
    "open arrays": (text) => (text.length > MAX_JSON_DEPTH ? "malformed" : "truncated"),
    "unescaped inner quotes": (text) => ({ k: text.slice('{"k": "'.length, -'"}'.length) }),
    "apostrophes before spaces": (text) => ({ k: text.slice("{'k': '".length, -"'}".length) }),
    "commas and comments": () => ({ a: 1 }),
    backslashes: (text) => ({ k: text.slice('{"k": "'.length, -'"}'.length) }),
    "bare words": () => "malformed",
    "three encoded layers": (text) => JSON.parse(JSON.parse(JSON.parse(text) as string) as string) as Record<string, unknown>,
  };

  it.each(ARGUMENT_SHAPES.map((entry) => [entry.name, entry] as const))("reads %s as documented at any size", (_name, entry) => {
    fc.assert(
      fc.property(size, (bytes) => {
        const text = entry.build(bytes);
        const expected = (argumentResults[entry.name] as (text: string) => unknown)(text);
        if (typeof expected === "string") {
          expect(() => parseToolArguments(text)).toThrow(expect.objectContaining({ name: "ToolArgumentsError", kind: expected }));
        } else {
          expect(parseToolArguments(text)).toEqual(expected);
        }
      }),
      { numRuns: 40 },
    );
  });

  /** Per markup shape, the calls recoverToolCalls finds in it (by name, and their arguments), with tool "a" offered. */
  const markupResults: Record<string, (text: string) => { names: string[]; args?: string; text?: string }> = {
    "<tool_call>{ repeated": () => ({ names: [] }),
    "[TOOL_CALLS][ repeated": () => ({ names: [] }),
    // Each marker opens a call to a whose arguments never close: read up to the next marker, and kept as written.
    "[TOOL_CALLS]a{ repeated": (text) => ({ names: Array(text.length / "[TOOL_CALLS]a{".length).fill("a"), args: "{", text: "" }),
    "<|python_tag|>{ repeated": () => ({ names: [] }),
    "<function= repeated": () => ({ names: [] }),
    "<function=a> repeated": (text) => ({ names: Array(text.length / "<function=a>".length).fill("a"), args: "{}", text: "" }),
    "<parameter= inside a call": () => ({ names: ["a"], args: "{}", text: "" }),
    "harmony call headers": () => ({ names: [] }),
    "harmony headers with long names": () => ({ names: [] }),
    "harmony role headers": () => ({ names: [] }),
    "bare role recipients": () => ({ names: [] }),
    "<tool_call>{ then one close": () => ({ names: [] }),
    "well-formed <function=a></function>": (text) => ({ names: Array(text.length / "<function=a></function>".length).fill("a"), args: "{}", text: "" }),
    "well-formed <tool_call> blocks": (text) => ({
      names: Array(text.length / '<tool_call>{"name":"a","arguments":{}}</tool_call>'.length).fill("a"),
      args: "{}",
      text: "",
    }),
    "open braces": () => ({ names: [] }),
    "fences holding braces": () => ({ names: [] }),
    "closing think tags": () => ({ names: [] }),
  };

  it.each(MARKUP_SHAPES.map((entry) => [entry.name, entry] as const))("recovers what %s documents at any size", (_name, entry) => {
    fc.assert(
      fc.property(size, (bytes) => {
        const text = entry.build(bytes);
        const expected = (markupResults[entry.name] as (text: string) => { names: string[]; args?: string; text?: string })(text);
        const found = recoverToolCalls(text, ["a"]);
        expect(found.calls.map((call) => call.function.name)).toEqual(expected.names);
        if (expected.args !== undefined) for (const call of found.calls) expect(call.function.arguments).toBe(expected.args);
        // No call found leaves the reply exactly as it was.
        expect(found.text).toBe(expected.names.length === 0 ? text : expected.text);
      }),
      { numRuns: 25 },
    );
  });

  it("reads a call whose arguments quote its own marker, past the next marker of its kind", () => {
    const quoting = '<tool_call>{"name": "a", "arguments": {"note": "write <tool_call> here"}}</tool_call>';
    expect(recoverToolCalls(`${quoting}\n${quoting}`, ["a"]).calls.map((call) => call.function.arguments)).toEqual([
      '{"note":"write <tool_call> here"}',
      '{"note":"write <tool_call> here"}',
    ]);
  });

  it("reads a call only up to the next marker of its kind when its arguments never close", () => {
    const found = recoverToolCalls('[TOOL_CALLS]a{"x": 1[TOOL_CALLS]b{"y": 2}', ["a", "b"]);
    expect(found.calls.map((call) => [call.function.name, call.function.arguments])).toEqual([
      ["a", '{"x": 1'],
      ["b", '{"y":2}'],
    ]);
  });
});
