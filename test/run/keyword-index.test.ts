import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CatalogServer } from "../../src/shapes/catalog.js";
import { forEachTerm, indexTools, isFunctionWord, queryTerms, splitWords, stemWord, termsOf } from "../../src/run/keyword-index.js";
import { REQUEST_SHAPES } from "../support/adversarial.js";

/**
 * The tokenizer as regular expressions over the whole text, the way it reads on paper: the
 * reference the one-pass tokenizer must agree with on every input.
 */
const reference = {
  splitWords(text: string): string[] {
    if (text.length === 0) return [];
    const spaced = text
      .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2")
      .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2")
      .toLowerCase();
    return spaced.split(/[^\p{L}\p{N}]+/u).filter((word) => word.length > 0);
  },
  stemWord(word: string): string {
    const undouble = (stem: string) => (/([b-df-hj-np-tv-z])\1$/.test(stem) && !/(?:ll|ss|zz)$/.test(stem) ? stem.slice(0, -1) : stem);
    if (word.length <= 3 || !/^[a-z]+$/.test(word)) return word;
    if (word.endsWith("ies") && word.length > 4) return word.slice(0, -3) + "y";
    if (word.endsWith("sses")) return word.slice(0, -2);
    if (/(?:ch|sh|x|z)es$/.test(word)) return word.slice(0, -2);
    if (word.endsWith("s") && !/(?:ss|us|is|ous)$/.test(word)) return word.slice(0, -1);
    if (word.endsWith("ing") && word.length > 5) return undouble(word.slice(0, -3));
    if (word.endsWith("ed") && word.length > 4) return undouble(word.slice(0, -2));
    return word;
  },
  termsOf(text: string): string[] {
    const terms: string[] = [];
    for (const word of reference.splitWords(text)) {
      if (isFunctionWord(word)) continue;
      if (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(word)) {
        const characters = [...word];
        if (characters.length === 1) terms.push(word);
        for (let i = 1; i < characters.length; i++) terms.push(characters[i - 1]! + characters[i]!);
        continue;
      }
      terms.push(reference.stemWord(word));
    }
    return terms;
  },
  queryTerms(terms: string[]): string[] {
    const wanted = new Map<string, number>();
    for (const term of terms) wanted.set(term, 1);
    for (let i = 1; i < terms.length; i++) {
      const pair = `${terms[i - 1]} ${terms[i]}`;
      if (!wanted.has(pair)) wanted.set(pair, 1);
    }
    return [...wanted.keys()];
  },
};

/** Characters a tokenizer can trip on: cases, digits, separators, scripts without spaces, letters whose lower case changes length, astral and lone surrogates. */
const tricky = fc.constantFrom(
  ..."aAzZ09 _-./'’\tÉéßİıΣσςΑαǅǄǆⅠⅰ①²读取文件ひらカタ한글\u0301\u0307\u200b\u{1D400}\u{1D41A}\u{20000}\u{1F600}".split(""),
  "\u{1D400}",
  "\u{1D41A}",
  "\u{20000}",
  "\ud800",
  "\udc00",
  "HTTP",
  "Server",
  "files",
  "the",
);
const text = fc.oneof(
  fc.array(tricky, { maxLength: 40 }).map((parts) => parts.join("")),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
);

describe("splitWords", () => {
  it("agrees with the regular expressions over the whole text on any text", () => {
    fc.assert(
      fc.property(text, (input) => {
        expect(splitWords(input)).toEqual(reference.splitWords(input));
      }),
      { numRuns: 2_000 },
    );
  });

  it("cuts camelCase, runs of capitals and digits where the regular expressions do", () => {
    for (const input of ["getWeatherForecast", "parseHTTPResponse", "v2Api", "ABCdef", "AAaAAa", "a1B", "ÉtéÉté", "ΣΑΣ.Α", "İstanbul", "x\u{1D400}y"]) {
      expect(splitWords(input), input).toEqual(reference.splitWords(input));
    }
  });
});

describe("stemWord", () => {
  it("agrees with the suffix patterns on any lower-case word", () => {
    const word = fc.array(fc.constantFrom(..."abcdeilnorsstuxyzgh"), { maxLength: 12 }).map((letters) => letters.join(""));
    fc.assert(
      fc.property(fc.oneof(word, fc.constantFrom("stopped", "filling", "passing", "buzzed", "boxes", "churches", "status", "analysis")), (input) => {
        expect(stemWord(input)).toBe(reference.stemWord(input));
      }),
      { numRuns: 2_000 },
    );
  });
});

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
