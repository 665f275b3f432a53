/**
 * @module thinking
 * Separates a model's scratchpad, fenced inside its content, from the answer.
 *
 * A server without a reasoning parser passes the model's deliberation through as content,
 * wrapped in tags such as `<think>…</think>`. {@link FenceSplitter} takes those fences out of a
 * stream chunk by chunk, holding back a tail that could be the start of a tag, and
 * {@link stripThinking} does the same for a whole reply. Both read the same fence tables,
 * {@link DEFAULT_FENCES} and {@link ALL_FENCES}, and give the same answer and reasoning however
 * the text is cut into chunks.
 */

import { isWhitespaceCode } from "./char-codes.js";
import { tokenSet, TokenScanner, type Token, type TokenSet } from "./fence-tokens.js";

/**
 * A pair of tags around a model's scratchpad, and any bare markers of the same format.
 *
 * Text between `open` and `close` is reasoning. `markers` are tags of the same chat format that
 * carry no text of their own (gpt-oss harmony's header of the final channel, for one); they are
 * dropped from the answer wherever they stand.
 */
export interface Fence {
  /** The tag that opens the scratchpad, for example `<think>`. */
  open: string;
  /** The tag that closes it, for example `</think>`. */
  close: string;
  /**
   * Other tags that also end the scratchpad, where the format may go on without its closing tag
   * (the next message's header); outside a fence they are dropped like markers.
   */
  ends?: readonly string[];
  /** Tags of the same format that are removed from the answer and fence nothing. */
  markers?: readonly string[] | undefined;
}

/**
 * The fences a model writes only as a scratchpad, never as part of an answer.
 *
 * `<think>` (Qwen3, DeepSeek-R1, QwQ and most open reasoning models); gpt-oss harmony's analysis
 * channel as a server that does not parse harmony passes it through
 * (`<|channel|>analysis<|message|>` … `<|end|>`, or up to the next message's
 * `<|start|>assistant` or `<|channel|>final<|message|>` header where the `<|end|>` is left out,
 * with those headers and the `<|return|>` and `<|call|>` tokens dropped from the answer); Kimi's
 * `◁think▷` … `◁/think▷`; and Gemma 4's thought channel, `<|channel>thought` … `<channel|>`
 * (the markup of its chat template, as llama.cpp ships it in
 * `models/templates/google-gemma-4-31B-it-interleaved.jinja`).
 */
export const DEFAULT_FENCES: readonly Fence[] = Object.freeze([
  Object.freeze({ open: "<think>", close: "</think>" }),
  Object.freeze({
    open: "<|channel|>analysis<|message|>",
    close: "<|end|>",
    ends: Object.freeze(["<|start|>assistant", "<|channel|>final<|message|>"]),
    markers: Object.freeze(["<|start|>assistant", "<|channel|>final<|message|>", "<|return|>", "<|call|>"]),
  }),
  Object.freeze({ open: "◁think▷", close: "◁/think▷" }),
  Object.freeze({ open: "<|channel>thought", close: "<channel|>" }),
]);

/**
 * The default fences plus `<thinking>` and `<reasoning>`, which a model may also write while
 * quoting or explaining.
 *
 * The side tasks read replies with these, since a short structured answer never holds those tags
 * on purpose.
 */
export const ALL_FENCES: readonly Fence[] = Object.freeze([
  ...DEFAULT_FENCES,
  Object.freeze({ open: "<thinking>", close: "</thinking>" }),
  Object.freeze({ open: "<reasoning>", close: "</reasoning>" }),
]);

/** Options of a {@link FenceSplitter} and of {@link stripThinking}. */
export interface FenceSplitterOptions {
  /**
   * The fences to recognise; an empty array reads everything as answer.
   * @default DEFAULT_FENCES
   */
  fences?: readonly Fence[] | undefined;
  /**
   * Start inside a fence, for a chat template that opens the scratchpad in the prompt, so that
   * nothing is handed out as answer before the first closing tag. A reply that never closes it is
   * then all reasoning. An opening tag the model writes anyway, before any reasoning, is dropped.
   * @default false
   */
  startInReasoning?: boolean | undefined;
}

/** What one {@link FenceSplitter.push} or {@link FenceSplitter.end} found. */
export interface SplitResult {
  /** Text that became answer; append it to what came before. */
  answer: string;
  /** Text that became reasoning (including any `moved` text); append it to what came before. */
  reasoning: string;
  /**
   * Answer handed out by earlier pushes that turned out to be reasoning: a closing tag arrived
   * with no opening tag (the template opened the fence in the prompt). It is always all of the
   * answer handed out so far; remove it from the answer. It is already part of `reasoning`.
   * Absent when nothing moved.
   */
  moved?: string | undefined;
}

const WHITESPACE = /^\s*$/;
const LEADING_WHITESPACE = /^\s+/;
const REASONING_SEPARATOR = "\n\n";

/**
 * Splits a streamed reply into answer and reasoning as chunks arrive.
 *
 * Text inside a fence is reasoning; the rest is answer. Whitespace right after an opening or
 * closing tag and right before a closing tag is template layout and is dropped; two fenced
 * passages are joined by a blank line. A tail that could be the start of a tag is held back
 * until the next push decides it, and {@link FenceSplitter.end} flushes it. A closing tag seen
 * before any fence opened (the template opened it in the prompt) turns everything before it into
 * reasoning and reports the answer already handed out as `moved`; a closing tag after a fence
 * has been seen (a stray one, as in `<think>a</think>b</think>c`) is dropped from the answer like
 * a marker, and the text either side of it stays answer (`bc`). A reply that ends inside a fence
 * leaves that text as reasoning. Tags are matched exactly, case and all. Each push takes time
 * linear in the chunk and the held-back tail, however many tags they hold.
 *
 * @example
 * ```ts
 * const splitter = new FenceSplitter();
 * let answer = "";
 * let reasoning = "";
 * for (const chunk of ["<thi", "nk>plan</th", "ink>\n\nHello"]) {
 *   const part = splitter.push(chunk);
 *   if (part.moved) answer = answer.slice(part.moved.length);
 *   answer += part.answer;
 *   reasoning += part.reasoning;
 * }
 * const rest = splitter.end();
 * answer += rest.answer; // "Hello"
 * reasoning += rest.reasoning; // "plan"
 * ```
 */
export class FenceSplitter {
  readonly #fences: readonly Fence[];
  /** Tokens looked for in the answer: opens, markers, and closes (an orphan, or a stray one to drop). */
  readonly #answerTokens: TokenSet;
  /** Every close, for a fence the template opened. */
  readonly #anyCloseTokens: TokenSet;
  /** Every close plus every open, while a template-opened fence has no text yet. */
  readonly #anyCloseOrOpenTokens: TokenSet;
  /** Each fence's own close, by fence. */
  readonly #closeTokens: TokenSet[];

  #pending = "";
  #inFence = false;
  /** The fence we are inside; -1 for a fence the template opened (any close ends it). */
  #fence = -1;
  #seenFence = false;
  /** The answer handed out before any fence was seen, which an orphan close would move. */
  #handedOut = "";
  /** Whitespace at the very start of the reply, held until we know whether a fence follows. */
  #leadingWhitespace = "";
  #answerStarted = false;
  #dropAnswerWhitespace = false;
  #reasoningStarted = false;
  #fenceHasText = false;
  #reasoningWhitespace = "";
  #needSeparator = false;

  /** Makes a splitter over `options.fences`, starting in the answer unless told otherwise. */
  constructor(options: FenceSplitterOptions = {}) {
    this.#fences = (options.fences ?? DEFAULT_FENCES).filter((fence) => fence.open !== "" && fence.close !== "");
    const opens: Token[] = [];
    const closes: Token[] = [];
    const markers: Token[] = [];
    const ends: Token[][] = [];
    this.#fences.forEach((fence, index) => {
      opens.push({ text: fence.open, kind: "open", fence: index });
      closes.push({ text: fence.close, kind: "close", fence: index });
      const own = fence.markers ?? [];
      for (const marker of own) if (marker !== "") markers.push({ text: marker, kind: "marker", fence: index });
      // A tag that ends the fence is a close inside it and a marker outside it.
      const endTags = (fence.ends ?? []).filter((end) => end !== "" && end !== fence.close);
      for (const end of endTags) if (!own.includes(end)) markers.push({ text: end, kind: "marker", fence: index });
      ends.push(endTags.map((end) => ({ text: end, kind: "close", fence: index })));
    });
    const allEnds = ends.flat();
    this.#answerTokens = tokenSet([...opens, ...markers, ...closes]);
    this.#anyCloseTokens = tokenSet([...closes, ...allEnds]);
    this.#anyCloseOrOpenTokens = tokenSet([...closes, ...allEnds, ...opens]);
    this.#closeTokens = closes.map((close, index) => tokenSet([close, ...(ends[index] ?? [])]));
    if (options.startInReasoning && this.#fences.length > 0) {
      this.#inFence = true;
      this.#fence = -1;
      this.#seenFence = true;
    }
  }

  /** Whether the splitter is inside a fence now, so text that arrives next is reasoning. */
  get inReasoning(): boolean {
    return this.#inFence;
  }

  /**
   * Reads the next chunk and returns what became answer and reasoning.
   *
   * A tail that could be the start of a tag is held back for the next push. Anything but a
   * string reads as an empty chunk.
   */
  push(chunk: string): SplitResult {
    return this.#run(this.#pending + (typeof chunk === "string" ? chunk : ""), false);
  }

  /** Flushes what was held back, as the reply has ended; a partial tag there is plain text. */
  end(): SplitResult {
    const result = this.#run(this.#pending, true);
    if (!this.#answerStarted && this.#leadingWhitespace !== "" && !this.#inFence) {
      // A reply of nothing but whitespace keeps it rather than losing it.
      result.answer += this.#leadingWhitespace;
      this.#leadingWhitespace = "";
    }
    this.#reasoningWhitespace = "";
    return result;
  }

  #tokens(): TokenSet {
    if (this.#inFence) {
      if (this.#fence >= 0) return this.#closeTokens[this.#fence] as TokenSet;
      return this.#fenceHasText ? this.#anyCloseTokens : this.#anyCloseOrOpenTokens;
    }
    return this.#answerTokens;
  }

  #run(text: string, final: boolean): SplitResult {
    const result: SplitResult = { answer: "", reasoning: "" };
    this.#pending = "";
    if (this.#fences.length === 0) {
      this.#emitAnswer(text, result);
      return result;
    }
    const scanner = new TokenScanner(text);
    let position = 0;
    while (position < text.length) {
      const tokens = this.#tokens();
      const found = scanner.find(position, tokens, final);
      if (found.index < 0) {
        this.#emitText(text.slice(position), result);
        return result;
      }
      if (found.token === undefined) {
        // Could be a tag that is not complete yet: hold it back.
        this.#emitText(text.slice(position, found.index), result);
        this.#pending = text.slice(found.index);
        return result;
      }
      const before = text.slice(position, found.index);
      if (this.#inFence && this.#fence < 0 && found.token.kind === "open" && !WHITESPACE.test(before)) {
        // Once a template-opened fence holds text, only a closing tag ends it: the text is read
        // first and the search starts again at the tag, as it would had the text come in its own
        // chunk, so a closing tag overlapping this opening one is still found.
        this.#emitReasoning(before, result);
        position = found.index;
        continue;
      }
      position = found.index + found.token.text.length;
      this.#apply(found.token, before, result);
    }
    return result;
  }

  #emitText(text: string, result: SplitResult): void {
    if (this.#inFence) this.#emitReasoning(text, result);
    else this.#emitAnswer(text, result);
  }

  #apply(token: Token, before: string, result: SplitResult): void {
    if (this.#inFence) {
      if (token.kind === "open") {
        // A template-opened fence whose model also wrote the opening tag: the tag is layout (an
        // opening tag after text never gets here; #run reads the text first and searches on).
        this.#fence = token.fence;
        return;
      }
      this.#emitReasoning(before, result);
      this.#closeFence();
      return;
    }
    if (token.kind === "marker" || (token.kind === "close" && this.#seenFence)) {
      // A marker, or a closing tag once a fence has been seen and closed: template markup, dropped.
      this.#emitAnswer(before, result);
      return;
    }
    if (token.kind === "open") {
      this.#emitAnswer(before, result, true);
      this.#leadingWhitespace = "";
      this.#inFence = true;
      this.#fence = token.fence;
      this.#seenFence = true;
      this.#fenceHasText = false;
      if (this.#reasoningStarted) this.#needSeparator = true;
      return;
    }
    // A closing tag before any fence: the template opened it, so everything so far was reasoning.
    const everything = this.#handedOut;
    // What this push produced is withdrawn here; only earlier pushes' answer needs `moved`.
    const moved = everything.slice(0, everything.length - result.answer.length);
    result.answer = "";
    if (moved !== "") result.moved = moved;
    this.#handedOut = "";
    this.#answerStarted = false;
    const reasoning = this.#leadingWhitespace + everything + before;
    this.#leadingWhitespace = "";
    this.#seenFence = true;
    this.#inFence = true;
    this.#fence = token.fence;
    this.#fenceHasText = false;
    this.#emitReasoning(reasoning, result);
    this.#closeFence();
  }

  #closeFence(): void {
    this.#inFence = false;
    this.#fence = -1;
    this.#reasoningWhitespace = "";
    this.#dropAnswerWhitespace = true;
  }

  #emitAnswer(text: string, result: SplitResult, beforeFence = false): void {
    if (text === "") return;
    if (this.#dropAnswerWhitespace) {
      text = text.replace(LEADING_WHITESPACE, "");
      if (text === "") return;
      this.#dropAnswerWhitespace = false;
    }
    if (!this.#answerStarted) {
      if (WHITESPACE.test(text)) {
        // Whitespace before the first word may be layout ahead of a fence: hold it.
        if (!beforeFence) this.#leadingWhitespace += text;
        return;
      }
      text = this.#leadingWhitespace + text;
      this.#leadingWhitespace = "";
      this.#answerStarted = true;
    }
    result.answer += text;
    if (!this.#seenFence) this.#handedOut += text;
  }

  #emitReasoning(text: string, result: SplitResult): void {
    if (text === "") return;
    if (!this.#fenceHasText) {
      text = text.replace(LEADING_WHITESPACE, "");
      if (text === "") return;
      this.#fenceHasText = true;
    }
    let cut = text.length;
    while (cut > 0 && isWhitespaceCode(text.charCodeAt(cut - 1))) cut--;
    const trailing = text.slice(cut);
    const body = text.slice(0, cut);
    if (body !== "") {
      if (this.#needSeparator) {
        result.reasoning += REASONING_SEPARATOR;
        this.#needSeparator = false;
      }
      result.reasoning += this.#reasoningWhitespace + body;
      this.#reasoningWhitespace = "";
      this.#reasoningStarted = true;
    }
    this.#reasoningWhitespace += trailing;
  }
}

/**
 * Splits a whole reply into its answer and its fenced reasoning.
 *
 * Reads the text exactly as a {@link FenceSplitter} fed it in one chunk would, so a stream and a
 * whole reply come out the same.
 *
 * @param text - The reply's content.
 * @param fences - The fences to recognise; `[]` reads everything as answer.
 * @param options - `startInReasoning` for a template that opens the fence in the prompt.
 * @example
 * ```ts
 * stripThinking("<think>The user greets me.</think>\n\nHello!");
 * // { content: "Hello!", reasoning: "The user greets me." }
 * ```
 */
export function stripThinking(
  text: string,
  fences: readonly Fence[] = DEFAULT_FENCES,
  options: Omit<FenceSplitterOptions, "fences"> = {},
): { content: string; reasoning: string } {
  const splitter = new FenceSplitter({ ...options, fences });
  const first = splitter.push(typeof text === "string" ? text : "");
  const last = splitter.end();
  return { content: first.answer + last.answer, reasoning: first.reasoning + last.reasoning };
}
