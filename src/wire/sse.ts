/**
 * @module wire/sse
 * A server-sent-events line splitter that works through each network chunk synchronously.
 *
 * It decodes bytes as UTF-8 across chunk boundaries, splits lines on LF, CRLF or a lone CR, and
 * hands each `data:` line to the caller the moment the line is complete, together with the
 * event name in force (`event:` lines). Comments (`:` lines), `id:` and `retry:` are read past.
 * There is no promise and no object per event: the cost of a stream is the decoding, the string
 * scanning and whatever the caller does with the data.
 *
 * Every OpenAI-compatible server writes one `data:` line per event, so each data line is handed
 * over on its own; joining a multi-line event is left to the caller (it knows when a line is not
 * a whole value). A line `error: …`, which some llama.cpp builds wrote for a failure inside the
 * stream, is handed over as data of an `error` event.
 */

/** Receives one data line: its text and the event name in force ("" for the default event). */
export type SseDataHandler = (data: string, event: string) => void;

/** Splits server-sent events out of a byte stream, one network chunk at a time. */
export class SseSplitter {
  readonly #onData: SseDataHandler;
  readonly #onBlank: (() => void) | undefined;
  readonly #decoder = new TextDecoder("utf-8");
  /** The unfinished last line of the previous chunk. */
  #rest = "";
  /** The event name in force until the next blank line. */
  #event = "";
  /** The previous chunk ended in CR, so an LF at the start of this one ends nothing. */
  #skipLeadingLf = false;

  /** Hands data lines to `onData`; `onBlank` hears each blank line, the end of an event. */
  constructor(onData: SseDataHandler, onBlank?: () => void) {
    this.#onData = onData;
    this.#onBlank = onBlank;
  }

  /** Works through one network chunk, handing every data line it completes to the handler. */
  push(bytes: Uint8Array): void {
    this.#text(this.#decoder.decode(bytes, { stream: true }));
  }

  /** Takes text already decoded (for tests and callers holding strings). */
  pushText(text: string): void {
    this.#text(text);
  }

  /** Flushes the decoder and a last line that had no line ending. */
  end(): void {
    const tail = this.#decoder.decode();
    if (tail) this.#text(tail);
    if (this.#rest !== "") {
      const line = this.#rest;
      this.#rest = "";
      this.#line(line);
    }
  }

  #text(chunk: string): void {
    let text = chunk;
    if (this.#skipLeadingLf) {
      this.#skipLeadingLf = false;
      if (text.charCodeAt(0) === 10) text = text.slice(1);
    }
    if (text === "") return;
    let start = 0;
    const length = text.length;
    // Fast path: LF-terminated lines, the way every server in practice writes them.
    let hasCr = text.indexOf("\r") !== -1;
    while (start < length) {
      let end = text.indexOf("\n", start);
      let next: number;
      if (hasCr) {
        const cr = text.indexOf("\r", start);
        if (cr === -1) hasCr = false;
        else if (end === -1 || cr < end) {
          end = cr;
          if (cr + 1 < length) next = text.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
          else {
            next = cr + 1;
            this.#skipLeadingLf = true;
          }
          this.#emit(text, start, end);
          start = next;
          continue;
        }
      }
      if (end === -1) break;
      this.#emit(text, start, end);
      start = end + 1;
    }
    if (start < length) this.#rest += start === 0 ? text : text.slice(start);
  }

  #emit(text: string, start: number, end: number): void {
    if (this.#rest !== "") {
      const line = this.#rest + text.slice(start, end);
      this.#rest = "";
      this.#line(line);
    } else this.#line(start === 0 && end === text.length ? text : text.slice(start, end));
  }

  #line(line: string): void {
    if (line.length === 0) {
      this.#event = "";
      this.#onBlank?.();
      return;
    }
    const first = line.charCodeAt(0);
    // "data:" is by far the most common line; test for it before anything else.
    if (first === 100 /* d */ && line.startsWith("data:")) {
      this.#onData(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5), this.#event);
      return;
    }
    if (first === 58 /* : */) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === "event") this.#event = value;
    else if (field === "data") this.#onData(value, this.#event);
    else if (field === "error") this.#onData(value, "error");
  }
}
