/**
 * @module wire/turn-reader
 * The reading half of `streamTurn`: each data line of a streamed chat completion parsed and
 * folded into one attempt's text, reasoning, tool calls, usage and timings, then assembled into
 * a Turn when the stream ends. The tool calls are put together by wire/tool-call-assembly and the
 * counts read by wire/turn-usage.
 */

import { APIError } from "openai";
import type { FinishReason, Turn } from "../shapes/config.js";
import { DEFAULT_FENCES, FenceSplitter, type Fence } from "../text/thinking.js";
import { isRecord } from "../text/guards.js";
import { streamedError } from "../text/error-body.js";
import { readContentParts, setAsideNotice, type ContentPartSink } from "./content-parts.js";
import { MAX_PENDING_CHARS, PendingEvent } from "./pending-event.js";
import { isMessageProviderField, mergeProviderField } from "./provider-fields.js";
import { ToolCallAssembly } from "./tool-call-assembly.js";
import { readTimings, readUsage } from "./turn-usage.js";
import { AgentCoreError, brand, isErrorNamed, type AgentCoreErrorOptions } from "../text/error-base.js";

/** A line of a malformed event is kept in the error up to this many characters. */
const LINE_EXCERPT = 200;

/** Options for a {@link MalformedStreamEvent}. */
export interface MalformedStreamEventOptions extends AgentCoreErrorOptions {
  /** The data line as it came. */
  line: string;
}

/**
 * A data line in the stream that is not JSON.
 *
 * The turn is abandoned rather than read on without the line, since a lost piece of a tool
 * call's arguments would surface later as a parse failure with nothing to point at. The JSON
 * error is the `cause`.
 */
export class MalformedStreamEvent extends AgentCoreError {
  override readonly name = "MalformedStreamEvent" as const;
  /** The start of the offending line. */
  readonly line: string;

  static {
    brand(this, "MalformedStreamEvent");
  }

  /** Makes the error; the line is kept (and quoted in the message) up to its first 200 characters. */
  constructor(options: MalformedStreamEventOptions) {
    const { line } = options;
    const excerpt = line.length > LINE_EXCERPT ? `${line.slice(0, LINE_EXCERPT)}…` : line;
    super({ message: options.message ?? `The stream carried a data line that is not JSON: ${excerpt}`, cause: options.cause });
    this.line = excerpt;
  }

  /** Tells a MalformedStreamEvent from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is MalformedStreamEvent {
    return isErrorNamed(value, "MalformedStreamEvent");
  }
}

type Json = Record<string, unknown>;

/** Everything one attempt has read so far, and the reading of each chunk. */
export class TurnReader {
  content = "";
  reasoning = "";
  finishReason: FinishReason = "";
  usage: unknown = undefined;
  timings: unknown = undefined;
  firstTokenMs: number | undefined;
  events = 0;
  done = false;
  produced = false;
  readonly #toolCalls = new ToolCallAssembly();
  /** Fields the server put on the message that the library does not read, as streamed. */
  #messageFields: Record<string, unknown> | undefined;
  #splitter: FenceSplitter | undefined;
  #contentSeen = false;
  /** The kinds of content part already said to be kept out of the answer. */
  readonly #setAside = new Set<string>();
  readonly #options: StreamTurnOptions;
  readonly #fences: readonly Fence[];
  readonly #onStart: () => void;
  readonly #started: number;
  readonly #now: () => number;
  readonly #headers: Headers | undefined;
  /** The data lines of an event whose JSON spreads over several lines, kept until it closes. */
  #pending: PendingEvent | undefined;

  constructor(options: StreamTurnOptions, started: number, now: () => number, onStart: () => void, headers?: Headers) {
    this.#options = options;
    this.#fences = options.fences ?? DEFAULT_FENCES;
    if (this.#fences.length > 0) {
      this.#splitter = new FenceSplitter({ fences: this.#fences, startInReasoning: options.startInReasoning === true });
    }
    this.#started = started;
    this.#now = now;
    this.#onStart = onStart;
    this.#headers = headers;
  }

  /** Reads one data line of the stream. */
  data = (data: string, event: string): void => {
    if (this.done) return;
    const pending = this.#pending;
    if (pending !== undefined) {
      // Each line is scanned once; the joined text is parsed once, when its brackets close.
      const next = pending.add(data);
      if (next === "wait") return;
      const text = pending.text();
      this.#pending = undefined;
      if (next === "too-long") throw new MalformedStreamEvent({ line: text });
      let chunk: unknown;
      try {
        chunk = JSON.parse(text);
      } catch (error) {
        throw new MalformedStreamEvent({ line: text, cause: error });
      }
      this.#take(chunk, event);
      return;
    }
    if (data.charCodeAt(0) === 91 /* [ */ && data === "[DONE]") {
      this.done = true;
      return;
    }
    if (data === "") return;
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch (error) {
      if (event === "error") throw this.#streamError(data);
      // An event may spread its JSON over several data lines; wait for the rest before judging.
      if (data.length > MAX_PENDING_CHARS) throw new MalformedStreamEvent({ line: data, cause: error });
      this.#pending = new PendingEvent(data);
      return;
    }
    this.#take(chunk, event);
  };

  #take(chunk: unknown, event: string): void {
    if (event === "error") throw this.#streamError(isRecord(chunk) && chunk.error !== undefined ? chunk.error : chunk);
    // Counted once read, so an error event is not among the events read before it.
    if (isRecord(chunk)) this.chunk(chunk);
    this.events++;
  }

  /** A blank line ends an event: a data line still waiting for its continuation is malformed. */
  endOfEvent(): void {
    if (this.#pending !== undefined) {
      const line = this.#pending.text();
      this.#pending = undefined;
      throw new MalformedStreamEvent({ line });
    }
  }

  chunk(chunk: Json): void {
    const failure = streamedError(chunk);
    if (failure !== undefined) throw this.#streamError(failure);
    const choices = chunk.choices;
    if (Array.isArray(choices)) {
      for (let i = 0; i < choices.length; i++) {
        const choice = choices[i];
        if (!isRecord(choice)) continue;
        if (choice.index !== undefined && choice.index !== 0) continue;
        const delta = choice.delta ?? choice.message;
        if (isRecord(delta)) this.#delta(delta);
        const finish = choice.finish_reason;
        if (typeof finish === "string" && finish !== "") {
          // OpenRouter ends a reply that failed upstream with finish_reason "error".
          if (finish === "error") throw this.#streamError(choice.error ?? { message: 'The server ended the reply with finish_reason "error".' });
          this.finishReason = finish;
        }
      }
    }
    if (isRecord(chunk.usage)) this.usage = chunk.usage;
    if (isRecord(chunk.timings)) this.timings = chunk.timings;
  }

  /** The error a stream reported inside a 200, as the SDK would have raised it, with what came before. */
  #streamError(error: unknown): StreamErrorEvent {
    const body = isRecord(error) ? error : { message: String(error) };
    const partial = this.partial(this.#now() - this.#started);
    return new StreamErrorEvent(body, { produced: this.produced, events: this.events, partial, ...(this.#headers ? { headers: this.#headers } : {}) });
  }

  #carried(): void {
    if (this.produced) return;
    this.produced = true;
    this.firstTokenMs = this.#now() - this.#started;
    const box = this.#options.produced;
    if (box) box.value = true;
    this.#onStart();
  }

  #delta(delta: Json): void {
    // One of the two, never both: a server in transition may send the same text in each.
    const reasoningContent = delta.reasoning_content;
    const reasoningField = typeof reasoningContent === "string" && reasoningContent !== "" ? reasoningContent : delta.reasoning;
    if (typeof reasoningField === "string" && reasoningField !== "") this.#reasoningText(reasoningField);
    const content = delta.content;
    if (typeof content === "string" && content !== "") {
      // The common case, kept inline: a string of answer text.
      this.#carried();
      this.#contentSeen = true;
      if (this.#splitter === undefined) {
        this.content += content;
        this.#options.onOutput?.(content);
      } else this.#split(this.#splitter.push(content));
    } else if (Array.isArray(content) && content.length > 0) readContentParts(content, this.#parts);
    for (const key in delta) {
      if (!isMessageProviderField(key, delta[key])) continue;
      const fields = (this.#messageFields ??= {});
      fields[key] = mergeProviderField(fields[key], delta[key]);
    }
    const toolCalls = delta.tool_calls;
    if (Array.isArray(toolCalls) && toolCalls.length > 0) {
      this.#carried();
      for (let i = 0; i < toolCalls.length; i++) {
        const piece = toolCalls[i];
        if (isRecord(piece)) this.#toolCalls.add(piece);
      }
    }
  }

  #reasoningText(text: string): void {
    this.#carried();
    if (!this.#contentSeen && this.#options.startInReasoning && this.#fences.length > 0) {
      // The server parses reasoning itself, so content is answer from the start.
      this.#splitter = new FenceSplitter({ fences: this.#fences });
    }
    this.reasoning += text;
    this.#options.onThinking?.(text);
  }

  #contentText(text: string): void {
    this.#carried();
    this.#contentSeen = true;
    if (this.#splitter === undefined) {
      this.content += text;
      this.#options.onOutput?.(text);
    } else this.#split(this.#splitter.push(text));
  }

  /** Where the pieces of content sent as a list of parts go. */
  readonly #parts: ContentPartSink = {
    text: (text) => this.#contentText(text),
    reasoning: (text) => this.#reasoningText(text),
    setAside: (kind, part) => {
      this.#carried();
      if (this.#setAside.has(kind)) return;
      this.#setAside.add(kind);
      this.#options.onNotice?.(setAsideNotice(kind, part));
    },
  };

  #split(part: { answer: string; reasoning: string; moved?: string }): void {
    if (part.moved !== undefined) this.content = this.content.slice(part.moved.length);
    if (part.reasoning !== "") {
      this.reasoning += part.reasoning;
      this.#options.onThinking?.(part.reasoning);
    }
    if (part.answer !== "") {
      this.content += part.answer;
      this.#options.onOutput?.(part.answer);
    }
  }

  /** Whether the wire said the reply is whole: `[DONE]` or a finish reason arrived. */
  get finished(): boolean {
    return this.done || this.finishReason !== "";
  }

  /** The stream has ended: flushes the fence splitter and builds the turn. */
  finish(durationMs: number): Turn {
    if (this.#splitter !== undefined) this.#split(this.#splitter.end());
    return this.partial(durationMs);
  }

  /** The turn as read so far, held-back text left unsaid: what a failure carries as its `partial`. */
  partial(durationMs: number): Turn {
    const toolCalls = this.#toolCalls.calls(this.#options.newCallId);
    const turn: Turn = {
      content: this.content,
      toolCalls,
      usage: readUsage(this.usage),
      finishReason: this.finishReason,
      reasoning: this.reasoning,
      durationMs,
    };
    const timings = readTimings(this.timings);
    if (timings !== undefined) turn.timings = timings;
    if (this.firstTokenMs !== undefined) turn.firstTokenMs = this.firstTokenMs;
    if (this.#messageFields !== undefined) turn.messageFields = this.#messageFields;
    return turn;
  }
}

/**
 * An error the server sent inside a 200 stream, in place of the rest of the reply.
 *
 * It is the SDK's APIError, carrying the server's words, code and type as a refused request
 * would, so every classifier reads it the same way (an overflow found after the headers arrives
 * like this), plus what the stream had shown before it. llama.cpp sends one with code 500 when
 * the model's output stops matching the format its parser expects part-way through a reply
 * ("Failed to update streamed response: …"); {@link StreamErrorEvent.serverFault} says so.
 */
export class StreamErrorEvent extends APIError {
  override readonly name = "StreamErrorEvent";
  /** Whether the stream had carried text, reasoning or a piece of a tool call before the error. */
  readonly produced: boolean;
  /** How many stream events had been read before the error. */
  readonly events: number;
  /** True where the server blames itself: a 5xx code, or `server_error` as the event's type or code. */
  readonly serverFault: boolean;
  /** The reply as read before the error (text, reasoning, tool calls so far); never an answer. */
  readonly partial?: Turn;

  constructor(error: Record<string, unknown>, options: { produced: boolean; events: number; headers?: Headers; partial?: Turn }) {
    super(undefined, error, undefined, options.headers ?? new Headers());
    this.produced = options.produced;
    this.events = options.events;
    if (options.partial !== undefined) this.partial = options.partial;
    const code = typeof error.code === "number" ? error.code : Number.NaN;
    this.serverFault = (code >= 500 && code < 600) || error.type === "server_error" || error.code === "server_error";
  }

  /** Tells a StreamErrorEvent from anything else without relying on instanceof. */
  static is(value: unknown): value is StreamErrorEvent {
    return value instanceof StreamErrorEvent || (value instanceof Error && value.name === "StreamErrorEvent");
  }
}

/** Options of {@link streamTurn}. */
export interface StreamTurnOptions {
  /** The attempt's box, set on the first chunk that carries something. */
  produced?: Produced | undefined;
  /** Stops the turn: the promise rejects with the signal's reason and the connection is closed. */
  signal?: AbortSignal | undefined;
  /**
   * The longest silence allowed between chunks once the reply has started, in milliseconds; the
   * clock restarts on every chunk. Zero or absent never gives up.
   */
  idleMs?: number | undefined;
  /**
   * How long the first chunk that carries something may take, in milliseconds, counted from the
   * request (it covers prefill, and a model loaded on demand). Zero turns it off.
   * @default five times idleMs where idleMs is set, otherwise none
   */
  firstChunkMs?: number | undefined;
  /** Told each piece of answer text as it arrives. */
  onOutput?: ((text: string) => void) | undefined;
  /** Told what the reader set aside rather than lose silently: a content part that is neither text nor reasoning. */
  onNotice?: ((text: string) => void) | undefined;
  /** Told each piece of reasoning as it arrives, from a reasoning field, a thinking part or from inside a fence. */
  onThinking?: ((text: string) => void) | undefined;
  /**
   * The fences that mark reasoning inside content; an empty array reads all content as answer.
   * @default DEFAULT_FENCES
   */
  fences?: readonly Fence[] | undefined;
  /**
   * The chat template opened the scratchpad in the prompt, so content is reasoning until the
   * first closing tag. Ignored once the server sends a reasoning field, which shows it parses
   * reasoning itself.
   * @default false
   */
  startInReasoning?: boolean | undefined;
  /**
   * The clock `firstTokenMs` and `durationMs` are read from, in milliseconds.
   * @default performance.now
   */
  now?: (() => number) | undefined;
  /**
   * Makes an id for a tool call the server sent without one.
   * @default "call_" followed by 24 random hexadecimal digits
   */
  newCallId?: (() => string) | undefined;
}

/**
 * A box saying whether an attempt has shown anything yet: one per attempt, set by
 * {@link streamTurn} on the first chunk that carries text, reasoning or a piece of a tool call.
 *
 * The `{"role":"assistant"}` chunk most servers open a stream with carries nothing and does not
 * set it, so a re-send after a failure reads `value` to know whether anybody has seen output.
 */
export interface Produced {
  /** True once a chunk carried text, reasoning or a piece of a tool call. */
  value: boolean;
}
