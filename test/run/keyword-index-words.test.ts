import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitWords, stemWord } from "../../src/run/keyword-index-words.js";
import { reference, text } from "../support/keyword-reference.js";

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
