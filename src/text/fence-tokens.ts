/**
 * @module text/fence-tokens
 * Finding the tags of a thinking fence in text that may arrive cut anywhere: the leftmost tag at
 * a position, the longest where two start together, and the point from which the text could
 * still turn out to be a tag and must wait for more.
 *
 * A {@link TokenScanner} reads one text from left to right and remembers, per tag, where that
 * tag next occurs, so however many tags the text holds, each tag's text is searched across the
 * text once: the whole read is linear in the text's length times the number of distinct tags.
 */

/** One tag to look for: its text, what it does, and the fence it belongs to. */
export interface Token {
  /** The tag itself, matched exactly. */
  text: string;
  /** Whether it opens a fence, closes one, or is a bare marker of the fence's format. */
  kind: "open" | "close" | "marker";
  /** The index of the fence it belongs to. */
  fence: number;
}

/** Tokens looked for together, with the characters any of them can start with. */
export interface TokenSet {
  tokens: readonly Token[];
  /** Each distinct first character once, so text without any of them is skipped quickly. */
  starts: string;
  /** The length of the longest token, which bounds how much of a tail may be a partial one. */
  longest: number;
}

/** Gathers tokens into a set, noting the characters they start with and the longest one. */
export function tokenSet(tokens: readonly Token[]): TokenSet {
  const starts = [...new Set(tokens.map((token) => token.text[0] as string))].join("");
  return { tokens, starts, longest: Math.max(0, ...tokens.map((token) => token.text.length)) };
}

/** Where {@link TokenScanner.find} found a tag, or the start of what may become one. */
export interface Found {
  /** Where the token (or a possible token) starts; -1 when there is none. */
  index: number;
  /** The token found there; undefined when the text ends inside what may be a token. */
  token?: Token | undefined;
}

/**
 * Finds tokens in one text, left to right: each search starts at or after the previous one.
 *
 * Per tag text it keeps the next place that tag occurs, and searches again only once the reading
 * has passed it, so the searches of one tag never cover the same stretch twice.
 */
export class TokenScanner {
  readonly #text: string;
  /** Per tag text, the next index it occurs at (-1: nowhere further on). */
  readonly #next = new Map<string, number>();
  /** The position of the previous search, which the next one may not precede. */
  #from = 0;

  /** Makes a scanner over `text`. */
  constructor(text: string) {
    this.#text = text;
  }

  /** Where `tag` next occurs at or after `from`; -1 where it does not. */
  #occurrence(tag: string, from: number): number {
    const cached = this.#next.get(tag);
    if (cached !== undefined && (cached < 0 || cached >= from)) return cached;
    const index = this.#text.indexOf(tag, from);
    this.#next.set(tag, index);
    return index;
  }

  /**
   * Finds the leftmost token at or after `from`, preferring the longest one at that position, or
   * the leftmost place where the text ends inside what could still become a token.
   *
   * `from` is meant to be at or after the previous call's (an earlier one starts the memory
   * afresh); `final` says no more text will follow, so a
   * tail that could still grow into a token is plain text.
   */
  find(from: number, set: TokenSet, final: boolean): Found {
    // Reading backwards would make the remembered places wrong: forget them.
    if (from < this.#from) this.#next.clear();
    this.#from = from;
    const text = this.#text;
    const { tokens, starts, longest } = set;
    // Most stream chunks hold no character a tag starts with: one search per start says so.
    let candidate = false;
    for (let index = 0; index < starts.length && !candidate; index++) candidate = this.#occurrence(starts[index] as string, from) >= 0;
    if (!candidate) return { index: -1 };
    let best = -1;
    let bestToken: Token | undefined;
    for (const token of tokens) {
      const index = this.#occurrence(token.text, from);
      if (index < 0) continue;
      if (best < 0 || index < best || (index === best && token.text.length > (bestToken as Token).text.length)) {
        best = index;
        bestToken = token;
      }
    }
    if (final) return bestToken === undefined ? { index: -1 } : { index: best, token: bestToken };
    // A partial token can only start within the last `longest - 1` characters.
    const start = Math.max(from, text.length - longest + 1);
    const limit = best < 0 ? text.length : best + 1;
    for (let index = start; index < limit; index++) {
      if (!starts.includes(text[index] as string)) continue;
      const rest = text.length - index;
      for (const token of tokens) {
        if (token.text.length > rest && token.text.startsWith(text.slice(index))) return { index };
      }
    }
    return bestToken === undefined ? { index: -1 } : { index: best, token: bestToken };
  }
}
