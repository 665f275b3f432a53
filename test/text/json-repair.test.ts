import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { balancedEnd, findJson, MAX_JSON_DEPTH, parseLooseJson } from "../../src/text/json-repair.js";
import { JSON_REPLY_SHAPES } from "../support/adversarial.js";

describe("findJson", () => {
  it("takes a reply that is only JSON", () => {
    expect(findJson('  {"a": 1}\n')).toBe('{"a": 1}');
  });

  it("takes the JSON out of a ``` fence", () => {
    expect(findJson('Here you go:\n```json\n{"tools": ["a"]}\n```\nAnything else?')).toBe('{"tools": ["a"]}');
  });

  it("takes the first balanced object out of prose, apostrophes and all", () => {
    expect(findJson("Here's what I'd pick: {'tools': ['read', 'write']} — hope that helps!")).toBe("{'tools': ['read', 'write']}");
  });

  it("skips a bracket in prose that is not JSON for one that is", () => {
    expect(findJson('Choose [one] of these: {"pick": "read"}')).toBe('{"pick": "read"}');
  });

  it("returns an object cut off at the end of the reply, for the parse to call truncated", () => {
    const found = findJson('Sure: {"tools": ["read", "wri');
    expect(found).toBe('{"tools": ["read", "wri');
    expect(parseLooseJson(found as string)).toMatchObject({ ok: false, truncated: true });
  });

  it("returns an unclosed fence's contents", () => {
    expect(findJson('```json\n{"a": 1}')).toBe('{"a": 1}');
  });

  it("returns undefined when there is no JSON at all", () => {
    expect(findJson("No brackets here.")).toBeUndefined();
  });

  it("never throws on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        const found = findJson(text);
        if (found !== undefined) expect(typeof found).toBe("string");
      }),
      { numRuns: 1000 },
    );
  });
});

describe("parseLooseJson", () => {
  it("says whether the repair was needed", () => {
    expect(parseLooseJson('{"a": 1}')).toEqual({ ok: true, value: { a: 1 }, repaired: false });
    expect(parseLooseJson("{'a': 1}")).toEqual({ ok: true, value: { a: 1 }, repaired: true });
  });
});

describe("balancedEnd", () => {
  it("reads brackets inside strings as text", () => {
    const text = '{"a": "}"} tail';
    expect(text.slice(0, balancedEnd(text, 0))).toBe('{"a": "}"}');
  });
});

describe("the nesting limit", () => {
  it(`parses ${MAX_JSON_DEPTH} levels and refuses one more, unread, as wrong rather than cut off`, () => {
    const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
    expect(parseLooseJson(nested(MAX_JSON_DEPTH)).ok).toBe(true);
    expect(parseLooseJson(nested(MAX_JSON_DEPTH + 1))).toEqual({ ok: false, truncated: false, message: `it nests deeper than ${MAX_JSON_DEPTH} levels` });
  });

  it("counts only brackets outside strings", () => {
    const text = `{"a": "${"[".repeat(MAX_JSON_DEPTH * 2)}", 'b': '${"{".repeat(MAX_JSON_DEPTH * 2)}'}`;
    expect(parseLooseJson(text)).toMatchObject({ ok: true, value: { a: "[".repeat(MAX_JSON_DEPTH * 2), b: "{".repeat(MAX_JSON_DEPTH * 2) } });
  });

  it("still calls text that ends open truncated, and wrong text not", () => {
    expect(parseLooseJson('{"a": [1, {"b": "c')).toMatchObject({ ok: false, truncated: true });
    expect(parseLooseJson('{"a": 1 // it\'s\n}')).toEqual({ ok: true, value: { a: 1 }, repaired: true });
    expect(parseLooseJson('{"a": b"}')).toMatchObject({ ok: false, truncated: false });
  });
});

describe("adversarial shapes, as the bench times them", () => {
  it.each(JSON_REPLY_SHAPES.map((shape) => [shape.name, shape] as const))("finds in %s only what parses, at any size", (name, shape) => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6_000 }), (bytes) => {
        const text = shape.build(bytes);
        const found = findJson(text);
        expect(found).toBeDefined();
        const parsed = parseLooseJson(found as string);
        // Only the closed objects are JSON; every other shape is a bracket never closed.
        if (name === "closed objects in prose") expect(parsed).toEqual({ ok: true, value: { a: 1 }, repaired: false });
        else expect(parsed.ok).toBe(false);
      }),
      { numRuns: 30 },
    );
  });
});
