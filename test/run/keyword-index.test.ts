import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CatalogServer } from "../../src/shapes/catalog.js";
import { indexTools, queryTerms, termsOf } from "../../src/run/keyword-index.js";
import { forEachTerm } from "../../src/run/keyword-index-words.js";
import { REQUEST_SHAPES } from "../support/adversarial.js";
import { reference, text } from "../support/keyword-reference.js";

describe("termsOf and queryTerms", () => {
  const catalog: CatalogServer[] = [{ name: "files", tools: [{ name: "read_file", description: "Reads a file." }] }];
  const index = indexTools(catalog);

  it("list the terms and pairs the word-by-word reading gives, each once, in the order first met", () => {
    fc.assert(
      fc.property(text, (input) => {
        const terms = reference.termsOf(input);
        expect(termsOf(input)).toEqual(terms);
        const seen: string[] = [];
        forEachTerm(input, true, (term) => seen.push(term));
        expect(seen).toEqual(terms);
        expect([...queryTerms(index, input).keys()]).toEqual(reference.queryTerms(terms));
      }),
      { numRuns: 1_000 },
    );
  });

  it.each(REQUEST_SHAPES.map((shape) => [shape.name, shape] as const))("read %s as the word-by-word reading does at any size", (_name, shape) => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6_000 }), (bytes) => {
        const input = shape.build(bytes);
        const terms = reference.termsOf(input);
        expect(termsOf(input)).toEqual(terms);
        expect([...queryTerms(index, input).keys()]).toEqual(reference.queryTerms(terms));
      }),
      { numRuns: 20 },
    );
  });
});
