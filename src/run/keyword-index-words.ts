/**
 * @module run/keyword-index-words
 * The words and terms keyword preselection reads from a text, before anything is counted.
 *
 * Words are lower-cased and split on camelCase, snake_case, kebab-case and anything that is not a
 * letter or a digit, in one pass over the text. A term is a word that is not an English function
 * word, reduced by a light suffix stemmer (plurals, -ing, -ed); Chinese and Japanese text, which
 * has no spaces to split on, is read as overlapping pairs of characters.
 */

/** Words that carry no topic, dropped from both sides before counting. */
const FUNCTION_WORDS: ReadonlySet<string> = new Set(
  (
    "a about above across after again against all almost along already also although always am among an and another any anybody anyone " +
    "anything anyway anywhere are aren around as at be became because been before being below beside besides between both but by can " +
    "cannot could couldn did didn do does doesn doing don done during each either else enough etc even ever every everybody everyone " +
    "everything except few for from further had hadn has hasn have haven having he her here hers herself him himself his how however i " +
    "if in into is isn it its itself just least less let like ll may maybe me might mine more most much must mustn my myself neither " +
    "never no nobody none nor not nothing now of off often on once one only onto or other others otherwise our ours ourselves out over " +
    "own per perhaps please quite rather re s same shall shan she should shouldn since so some somebody someone something sometimes " +
    "somewhere such t than that the their theirs them themselves then there these they this those though through thus to too toward " +
    "towards under until unto up upon us ve very via was wasn we were weren what whatever when whenever where wherever whether which " +
    "while who whoever whom whose why will with within without won would wouldn yet you your yours yourself yourselves d m o y"
  ).split(" "),
);

// Classes of a code point, as bits: what the word splitter and the pair reader ask of a character.
const UPPER = 1; // \p{Lu}
const LOWER = 2; // \p{Ll}
const NUMBER = 4; // \p{N}
const LETTER = 8; // \p{L}

const IS_UPPER = /^\p{Lu}$/u;
const IS_LOWER = /^\p{Ll}$/u;
const IS_NUMBER = /^\p{N}$/u;
const IS_LETTER = /^\p{L}$/u;

/**
 * The classes of a code point. `cache` holds those met outside ASCII, so each is looked up once
 * per text; it lives only as long as the one call that reads the text.
 */
function classOf(code: number, cache: Map<number, number>): number {
  if (code < 0x80) {
    if (code >= 0x61 && code <= 0x7a) return LOWER | LETTER;
    if (code >= 0x41 && code <= 0x5a) return UPPER | LETTER;
    return code >= 0x30 && code <= 0x39 ? NUMBER : 0;
  }
  let bits = cache.get(code);
  if (bits === undefined) {
    const character = String.fromCodePoint(code);
    bits =
      (IS_UPPER.test(character) ? UPPER : 0) |
      (IS_LOWER.test(character) ? LOWER : 0) |
      (IS_NUMBER.test(character) ? NUMBER : 0) |
      (IS_LETTER.test(character) ? LETTER : 0);
    cache.set(code, bits);
  }
  return bits;
}

const ASCII = /^[\x00-\x7f]*$/;

/** Whether a string is all ASCII: then a word is a run of ASCII letters and digits, and lower-casing keeps every position. */
function isAscii(text: string): boolean {
  return ASCII.test(text);
}

const NOT_A_WORD = /[^\p{L}\p{N}]+/u;

/** ASCII classes of a code unit: a capital, a small letter, a letter or digit. */
const ASCII_CAPITAL = /[A-Z]/;
const isAsciiUpper = (code: number): boolean => code >= 0x41 && code <= 0x5a;
const isAsciiLower = (code: number): boolean => code >= 0x61 && code <= 0x7a;
const isAsciiWordUnit = (code: number): boolean => isAsciiLower(code) || isAsciiUpper(code) || (code >= 0x30 && code <= 0x39);

/** {@link forEachWord} on ASCII text: code unit by code unit, each unit read a fixed number of times. */
function forEachAsciiWord(text: string, visit: (word: string) => void): void {
  // Text with no capital is its own lower case; copying it anyway costs more than the scan.
  const lower = ASCII_CAPITAL.test(text) ? text.toLowerCase() : text;
  const length = text.length;
  let start = -1;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (!isAsciiWordUnit(code)) {
      if (start >= 0) visit(lower.slice(start, i));
      start = -1;
      continue;
    }
    if (start < 0) {
      start = i;
      continue;
    }
    if (!isAsciiUpper(code)) continue;
    const before = text.charCodeAt(i - 1);
    if (isAsciiUpper(before) ? i + 1 < length && isAsciiLower(text.charCodeAt(i + 1)) : true) {
      // A capital after a small letter or a digit, or the last capital of a run a small letter follows.
      visit(lower.slice(start, i));
      start = i;
    }
  }
  if (start >= 0) visit(lower.slice(start));
}

/**
 * Calls `visit` with each lower-case word of a text, in order: the words {@link splitWords} lists.
 *
 * One pass over the text. A camelCase boundary falls before a capital that follows a small letter
 * or a digit, and before a capital that follows a capital and precedes a small letter
 * (`HTTPServer`); words are what lies between those boundaries and anything that is not a letter
 * or a digit. ASCII text is split by code unit; other text has the boundaries marked in the same
 * pass and is then lower-cased whole and split, since lower-casing outside ASCII can change a
 * string's length.
 */
function forEachWord(text: string, visit: (word: string) => void): void {
  if (isAscii(text)) {
    forEachAsciiWord(text, visit);
    return;
  }
  // Mark each boundary with a space, as the words are cut, then lower-case and split the whole.
  const pieces: string[] = [];
  const classes = new Map<number, number>();
  let cut = 0;
  let before = 0;
  for (let i = 0; i < text.length;) {
    const code = text.codePointAt(i)!;
    const width = code > 0xffff ? 2 : 1;
    const bits = classOf(code, classes);
    if (bits & UPPER && i > 0) {
      const next = i + width < text.length ? classOf(text.codePointAt(i + width)!, classes) : 0;
      if (before & (LOWER | NUMBER) || (before & UPPER && next & LOWER)) {
        pieces.push(text.slice(cut, i));
        cut = i;
      }
    }
    before = bits;
    i += width;
  }
  pieces.push(text.slice(cut));
  const spaced = pieces.length === 1 ? text : pieces.join(" ");
  for (const word of spaced.toLowerCase().split(NOT_A_WORD)) if (word.length > 0) visit(word);
}

/** Splits text into lower-case words on camelCase, snake_case, kebab-case and non-alphanumerics. */
export function splitWords(text: string): string[] {
  if (typeof text !== "string" || text.length === 0) return [];
  const words: string[] = [];
  forEachWord(text, (word) => words.push(word));
  return words;
}

/** Tells whether a lower-case word is an English function word. */
export function isFunctionWord(word: string): boolean {
  return FUNCTION_WORDS.has(word);
}

const CONSONANT_OR_Y = /^[b-df-hj-np-tv-z]$/;

/** Reduces a lower-case word by a few English suffixes, so "files", "filing" and "filed" meet "file". */
export function stemWord(word: string): string {
  if (word.length <= 3 || !/^[a-z]+$/.test(word)) return word;
  // Only the end of the word is read past the check above: a suffix test never rescans the word.
  if (word.endsWith("ies") && word.length > 4) return word.slice(0, -3) + "y";
  if (word.endsWith("sses")) return word.slice(0, -2);
  if (word.endsWith("ches") || word.endsWith("shes") || word.endsWith("xes") || word.endsWith("zes")) return word.slice(0, -2);
  if (word.endsWith("s") && !(word.endsWith("ss") || word.endsWith("us") || word.endsWith("is"))) return word.slice(0, -1);
  if (word.endsWith("ing") && word.length > 5) return undouble(word.slice(0, -3));
  if (word.endsWith("ed") && word.length > 4) return undouble(word.slice(0, -2));
  return word;
}

/** Drops the last letter of a stem that ends in a doubled consonant (`stopp` → `stop`), but not ll, ss or zz. */
function undouble(stem: string): string {
  const last = stem.charAt(stem.length - 1);
  if (stem.length < 2 || stem.charAt(stem.length - 2) !== last || !CONSONANT_OR_Y.test(last)) return stem;
  return last === "l" || last === "s" || last === "z" ? stem : stem.slice(0, -1);
}

/** Scripts written without spaces between words, read as overlapping pairs of characters. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/**
 * Calls `visit` with each term of a text, in order: its words less function words, each stemmed
 * when asked, and a run of Chinese or Japanese characters as its overlapping pairs (a single
 * character stays one term). One pass; the pairs come one at a time, never as a list.
 */
export function forEachTerm(text: string, stem: boolean, visit: (term: string) => void): void {
  if (typeof text !== "string" || text.length === 0) return;
  forEachWord(text, (word) => {
    if (FUNCTION_WORDS.has(word)) return;
    if (!UNSPACED.test(word)) {
      visit(stem ? stemWord(word) : word);
      return;
    }
    // Overlapping pairs of code points; a word of one code point stays one term.
    const firstWidth = word.codePointAt(0)! > 0xffff ? 2 : 1;
    if (firstWidth === word.length) {
      visit(word);
      return;
    }
    let from = 0;
    let middle = firstWidth;
    while (middle < word.length) {
      const end = middle + (word.codePointAt(middle)! > 0xffff ? 2 : 1);
      visit(word.slice(from, end));
      from = middle;
      middle = end;
    }
  });
}
