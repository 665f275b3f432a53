/**
 * @module wire/continuation-echo
 * Reads a continuation's reply against the answer it was asked to carry on: a reply that repeats
 * the whole answer first (llama.cpp streams the prefill back before the new text, and a reply
 * that is not streamed holds both) has the repeat taken off; a reply that repeats the opening of
 * a long answer and then goes another way is the model starting over; anything else is new text.
 *
 * Output is held back only while the reply could still be either, so the new text reaches the
 * caller as soon as it is known to be new, and a repeat is never shown.
 */

/** How much of the answer so far a reply must repeat, at its start, to count as starting over. */
export const RESTART_PROBE = 64;

/** What a continuation's reply turned out to be, so far. */
export type EchoVerdict = "undecided" | "continues" | "restarted";

/**
 * Sorts a continuation's reply, piece by piece, into new text, a repeat of the prefill, or a
 * restart.
 *
 * A repeat is the whole answer so far, as sent (or with its leading white space dropped), at
 * the reply's very start: it is taken off and what follows is read again, so a server that
 * echoes the prefill and then starts over is still seen starting over. A restart is a reply
 * that opens, leading white space aside, with the answer's first {@link RESTART_PROBE}
 * characters without being a repeat of all of it; only an answer longer than that can be seen
 * starting over, since a shorter opening is as likely a small model repeating itself. Anything
 * else is new text.
 * @internal
 */
export class EchoSieve {
  readonly #forms: readonly string[];
  readonly #probe: string | undefined;
  #held = "";
  #afterEcho = false;
  #verdict: EchoVerdict = "undecided";
  #echoed = false;

  /** @param soFar - The answer so far, as the trailing assistant message carried it. */
  constructor(soFar: string) {
    const trimmed = soFar.trimStart();
    this.#forms = trimmed === soFar ? [soFar] : [soFar, trimmed];
    this.#probe = trimmed.length > RESTART_PROBE ? trimmed.slice(0, RESTART_PROBE) : undefined;
    if (trimmed === "") this.#verdict = "continues";
  }

  /** What the reply is, so far. */
  get verdict(): EchoVerdict {
    return this.#verdict;
  }

  /** Whether the reply began by repeating the whole answer so far. */
  get echoed(): boolean {
    return this.#echoed;
  }

  /** Takes the next piece of the reply; returns the text that is now known to be new ("" while undecided). */
  push(text: string): string {
    if (this.#verdict === "continues") return text;
    if (this.#verdict === "restarted") return "";
    this.#held += text;
    return this.#decide(false);
  }

  /** The reply has ended: returns whatever held text is new, deciding what is still undecided. */
  end(): string {
    if (this.#verdict !== "undecided") return "";
    return this.#decide(true);
  }

  #release(): string {
    this.#verdict = "continues";
    const text = this.#held;
    this.#held = "";
    return text;
  }

  #restart(): string {
    this.#verdict = "restarted";
    this.#held = "";
    return "";
  }

  #decide(ended: boolean): string {
    const held = this.#held;
    if (!this.#afterEcho) {
      const echo = this.#forms.find((form) => held.startsWith(form));
      if (echo !== undefined) {
        this.#echoed = true;
        this.#afterEcho = true;
        this.#held = held.slice(echo.length);
        return this.#decide(ended);
      }
      if (!ended && this.#forms.some((form) => form.startsWith(held))) return "";
    }
    const probe = this.#probe;
    if (probe === undefined) return this.#release();
    const start = held.trimStart();
    if (start.length >= probe.length) return start.startsWith(probe) ? this.#restart() : this.#release();
    if (!ended && probe.startsWith(start)) return "";
    return this.#release();
  }
}

/**
 * Takes a repeat of the answer so far off the front of a reply's content, where the reply began
 * with one; anything else comes back as it is.
 * @internal
 */
export function stripEcho(content: string, soFar: string): string {
  if (soFar.trimStart() === "") return content;
  for (const form of [soFar, soFar.trimStart()]) if (content.startsWith(form)) return content.slice(form.length);
  return content;
}
