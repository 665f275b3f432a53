import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { STRICT_LIMITS, measureStrictSchema, strictLimitsPassed, withinStrictLimits } from "../../src/text/schema-strict-size.js";
import { strictSchema } from "../../src/text/schema-strict.js";
import type { Json, JsonObject } from "../../src/text/schema-tree.js";
import { nestingThroughReferences, strictModeViolations } from "../support/strict-mode.js";

/** `levels` closed objects, one inside the next, with `leaf` as the innermost property. */
function nested(levels: number, leaf: JsonObject): JsonObject {
  if (levels === 0) return leaf;
  return { type: "object", properties: { inner: nested(levels - 1, leaf) }, required: ["inner"], additionalProperties: false };
}

const string: JsonObject = { type: "string" };

function withDefinitions(root: JsonObject, defs: Record<string, JsonObject>): JsonObject {
  return { ...root, $defs: defs };
}

describe("measureStrictSchema's depth through $ref", () => {
  it("counts a definition's levels where it is referenced: 3 levels used at depth 9 make 12", () => {
    const schema = withDefinitions(nested(9, { $ref: "#/$defs/stage" }), { stage: nested(3, string) });
    expect(measureStrictSchema(schema).depth).toBe(12);
    expect(withinStrictLimits(schema)).toBe(false);
    expect(strictLimitsPassed(measureStrictSchema(schema))).toEqual(["12 levels of nesting"]);
    expect(strictModeViolations(schema)).toContain("R9: nested 12 objects deep once references are followed");
  });

  it("keeps the same definition used at depth 7, which makes exactly 10", () => {
    const schema = withDefinitions(nested(7, { $ref: "#/$defs/stage" }), { stage: nested(3, string) });
    expect(measureStrictSchema(schema).depth).toBe(STRICT_LIMITS.depth);
    expect(withinStrictLimits(schema)).toBe(true);
    expect(strictModeViolations(schema)).toEqual([]);
  });

  it("follows a chain of references, each adding its own levels", () => {
    const schema = withDefinitions(nested(2, { $ref: "#/$defs/a" }), { a: nested(4, { $ref: "#/$defs/b" }), b: nested(5, string) });
    expect(measureStrictSchema(schema).depth).toBe(11);
    expect(nestingThroughReferences(schema)).toBe(11);
  });

  it("takes the deepest place a definition is used, not the first", () => {
    const root: JsonObject = {
      type: "object",
      properties: { shallow: { $ref: "#/$defs/stage" }, deep: nested(8, { $ref: "#/$defs/stage" }) },
      required: ["shallow", "deep"],
      additionalProperties: false,
    };
    expect(measureStrictSchema(withDefinitions(root, { stage: nested(2, string) })).depth).toBe(11);
  });

  it("ends at a definition that refers to itself, counting one turn of the recursion", () => {
    const node: JsonObject = {
      type: "object",
      properties: { value: string, next: { anyOf: [{ $ref: "#/$defs/node" }, { type: "null" }] } },
      required: ["value", "next"],
      additionalProperties: false,
    };
    const schema = withDefinitions(nested(1, { $ref: "#/$defs/node" }), { node });
    expect(measureStrictSchema(schema).depth).toBe(2);
    expect(nestingThroughReferences(schema)).toBe(2);
    expect(strictModeViolations(schema)).toEqual([]);
  });

  it("ends at two definitions that refer to each other, whichever is reached first", () => {
    const a = nested(1, { $ref: "#/$defs/b" });
    const b = nested(2, { $ref: "#/$defs/a" });
    const root: JsonObject = {
      type: "object",
      properties: { first: { $ref: "#/$defs/a" }, second: nested(3, { $ref: "#/$defs/b" }) },
      required: ["first", "second"],
      additionalProperties: false,
    };
    const schema = withDefinitions(root, { a, b });
    // second: 1 (root) + 3 + b's 2 + a's 1 = 7; the way back into b ends there.
    expect(nestingThroughReferences(schema)).toBe(7);
    expect(measureStrictSchema(schema).depth).toBeGreaterThanOrEqual(7);
    expect(Number.isFinite(measureStrictSchema(schema).depth)).toBe(true);
  });

  it("ends at a reference to the root", () => {
    const schema: JsonObject = { type: "object", properties: { child: { $ref: "#" } }, required: ["child"], additionalProperties: false };
    expect(measureStrictSchema(schema).depth).toBe(1);
    expect(measureStrictSchema(strictSchema(schema)).depth).toBeLessThanOrEqual(2);
  });

  it("does not take a property named properties for a level, nor a default or enum holding objects", () => {
    const schema: JsonObject = {
      type: "object",
      properties: { properties: { type: "object", properties: {}, required: [], additionalProperties: false } },
      required: ["properties"],
      additionalProperties: false,
      default: { properties: { properties: { properties: {} } } },
    };
    expect(measureStrictSchema(schema).depth).toBe(2);
  });

  it("ignores a reference that leads nowhere and one that is not local", () => {
    const schema = nested(2, { anyOf: [{ $ref: "#/$defs/missing" }, { $ref: "https://example.com/schema.json" }, { $ref: "#/x/~1/9" }] });
    expect(measureStrictSchema(schema).depth).toBe(2);
  });

  it("never answers less than the deepest path with each recursion taken once round", () => {
    // Up to five definitions, each some levels deep, referring to any of the others.
    const graph = fc.array(fc.record({ levels: fc.integer({ min: 0, max: 4 }), refs: fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }) }), {
      minLength: 1,
      maxLength: 5,
    });
    fc.assert(
      fc.property(graph, fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 3 }), (defs, rootRefs) => {
        const ref = (index: number): JsonObject => ({ $ref: `#/$defs/d${index % defs.length}` });
        const $defs: Record<string, JsonObject> = {};
        defs.forEach((def, index) => {
          $defs[`d${index}`] = nested(def.levels, def.refs.length === 0 ? string : { anyOf: def.refs.map(ref) });
        });
        const schema = withDefinitions(nested(1, { anyOf: rootRefs.map(ref) }), $defs);
        const measured = measureStrictSchema(schema).depth;
        expect(measured).toBeGreaterThanOrEqual(nestingThroughReferences(schema));
        expect(Number.isFinite(measured)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("stays bounded on a large tangle of mutually recursive definitions, calling it over the limit if it cannot finish", () => {
    const count = 400;
    const $defs: Record<string, JsonObject> = {};
    for (let index = 0; index < count; index++) {
      const next = [1, 2, 3].map((step) => ({ $ref: `#/$defs/d${(index + step) % count}` }));
      $defs[`d${index}`] = nested(1, { anyOf: next });
    }
    const schema = withDefinitions(nested(1, { $ref: "#/$defs/d0" }), $defs);
    const { depth } = measureStrictSchema(schema);
    expect(depth).toBeGreaterThan(STRICT_LIMITS.depth);
    expect(withinStrictLimits(schema)).toBe(false);
  });

  it("stays within the call stack on a chain of references thousands long", () => {
    const count = 5000;
    const $defs: Record<string, JsonObject> = {};
    for (let index = 0; index < count; index++) $defs[`d${index}`] = index + 1 < count ? { $ref: `#/$defs/d${index + 1}` } : nested(1, string);
    const schema = withDefinitions(nested(1, { $ref: "#/$defs/d0" }), $defs);
    expect(measureStrictSchema(schema).depth).toBe(Number.POSITIVE_INFINITY);
  });
});

describe("measureStrictSchema's tallies", () => {
  it("counts properties, enum values and characters, each definition once however often it is used", () => {
    const schema = withDefinitions(
      {
        type: "object",
        properties: { a: { $ref: "#/$defs/pair" }, b: { $ref: "#/$defs/pair" } },
        required: ["a", "b"],
        additionalProperties: false,
      },
      {
        pair: {
          type: "object",
          properties: { x: { type: "string", enum: ["one", "two"] }, y: { const: "c" } },
          required: ["x", "y"],
          additionalProperties: false,
        },
      },
    );
    expect(measureStrictSchema(schema)).toEqual({ depth: 2, properties: 4, enumValues: 2, characters: 4 + 4 + 6 + 1 });
  });

  it("names every limit passed", () => {
    expect(strictLimitsPassed({ depth: 11, properties: 5001, enumValues: 1001, characters: 120_001 })).toEqual([
      "11 levels of nesting",
      "5001 properties",
      "1001 enum values",
      "120001 characters of names and values",
    ]);
    expect(strictLimitsPassed({ depth: Number.POSITIVE_INFINITY, properties: 0, enumValues: 0, characters: 0 })).toEqual(["nesting too tangled to measure"]);
    expect(strictLimitsPassed({ depth: 10, properties: 5000, enumValues: 1000, characters: 120_000 })).toEqual([]);
  });

  it("never throws on what is not a schema", () => {
    for (const value of [null, 3, "x", [], [{ properties: {} }], true, false] as Json[]) expect(() => measureStrictSchema(value)).not.toThrow();
  });
});
