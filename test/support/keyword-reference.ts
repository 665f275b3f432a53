/**
 * The reference for the keyword tokenizer (src/run/keyword-index-words.ts) and random text to try
 * it on, shared by the tests of the words and of the index.
 */
import fc from "fast-check";
import { isFunctionWord } from "../../src/run/keyword-index-words.js";

/**
 * The tokenizer as regular expressions over the whole text, the way it reads on paper: the
 * reference the one-pass tokenizer must agree with on every input.
 */
export const reference = {
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
export const text = fc.oneof(
  fc.array(tricky, { maxLength: 40 }).map((parts) => parts.join("")),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
);
