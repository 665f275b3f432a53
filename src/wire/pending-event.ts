/**
 * @module wire/pending-event
 * The data lines of one server-sent event whose JSON spreads over several lines, gathered in
 * time linear in their length.
 */

/** The most characters an event spread over several data lines may come to. @internal */
export const MAX_PENDING_CHARS = 1_000_000;

/** How much of an event that can no longer parse is kept, for the error that quotes it. */
const KEPT_OF_HOPELESS = 1024;

/**
 * The data lines of one event whose JSON did not parse on its first line, scanned as they come:
 * the bracket depth outside strings says when the value can close, so the joined text is parsed
 * once rather than at every line. A value that can no longer become JSON (closed and still not
 * parsing, a string across a line break) waits for the blank line, which reports it malformed.
 *
 * @internal
 */
export class PendingEvent {
  readonly #lines: string[] = [];
  #chars = 0;
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** Whether no continuation can make the text parse any more. */
  #hopeless = false;
  /** The characters of the lines kept, which stop growing once the event is hopeless. */
  #kept = 0;

  constructor(first: string) {
    this.#scan(first);
    this.#lines.push(first);
    this.#chars = first.length;
    this.#kept = first.length;
    // The first line failed alone: a value it closed (or never opened) stays broken.
    if (this.#depth <= 0 || this.#inString) this.#hopeless = true;
  }

  /**
   * Adds the next data line: "parse" when the value's brackets have closed and it is worth
   * parsing, "too-long" past MAX_PENDING_CHARS, otherwise "wait" for the next line.
   */
  add(line: string): "wait" | "parse" | "too-long" {
    this.#chars += line.length + 1;
    // A hopeless event is only ever quoted, by its start: the rest is counted, not kept.
    if (!this.#hopeless || this.#kept < KEPT_OF_HOPELESS) {
      this.#lines.push(line);
      this.#kept += line.length + 1;
    }
    if (this.#chars > MAX_PENDING_CHARS) return "too-long";
    if (this.#hopeless) return "wait";
    // A raw line break inside a string is not JSON, whatever follows.
    if (this.#inString) {
      this.#hopeless = true;
      return "wait";
    }
    this.#scan(line);
    return this.#depth <= 0 && !this.#inString ? "parse" : "wait";
  }

  /**
   * The lines so far, joined the way the event spells them; of an event that can no longer
   * parse, only its first lines (about a kilobyte), which is all the error quoting it keeps.
   */
  text(): string {
    return this.#lines.join("\n");
  }

  #scan(line: string): void {
    let depth = this.#depth;
    let inString = this.#inString;
    let escaped = this.#escaped;
    for (let index = 0; index < line.length; index++) {
      const code = line.charCodeAt(index);
      if (inString) {
        if (escaped) escaped = false;
        else if (code === 92 /* \\ */) escaped = true;
        else if (code === 34 /* " */) inString = false;
      } else if (code === 34) inString = true;
      else if (code === 123 /* { */ || code === 91 /* [ */) depth++;
      else if (code === 125 /* } */ || code === 93 /* ] */) depth--;
    }
    this.#depth = depth;
    this.#inString = inString;
    this.#escaped = escaped;
  }
}
